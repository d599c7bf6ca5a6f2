// Types and constants shared by the main thread and the Piscina worker.
// Everything here must survive structured cloning: plain objects, numbers, strings, typed arrays.

/** Output size tier after aliases are resolved (`small`/`regular` → preview, `4k` → full). `auto` is resolved by the caller. */
export type SizeTier = 'preview' | 'medium' | 'hd' | 'full' | '50MP';

/** Requested output container. `auto` → PNG when the result has transparency, else JPEG. */
export type OutputFormat = 'auto' | 'png' | 'jpg' | 'webp' | 'zip';

export type Channels = 'rgba' | 'alpha';

/** A CSS-like length: pixels or a percentage (of the reference dimension the field names). */
export interface Length {
  value: number;
  unit: 'px' | '%';
}

export interface Margins {
  top: Length;
  right: Length;
  bottom: Length;
  left: Length;
}

/** Region of interest in input coordinates: only pixels inside can be foreground. */
export interface Roi {
  x1: Length;
  y1: Length;
  x2: Length;
  y2: Length;
}

/** Normalised, validated options for one removal. Validation happens at the edge (api/params.ts, cli). */
export interface RemoveOptions {
  size: SizeTier;
  format: OutputFormat;
  channels: Channels;
  /** Solid background as straight RGBA 0..255; absent = transparent. */
  bgColor?: [number, number, number, number];
  /** Encoded background image (JPEG/PNG/WebP bytes), centred and resized to cover. */
  bgImage?: Uint8Array;
  crop: boolean;
  /** Only with crop. */
  cropMargin?: Margins;
  /** Subject size relative to the canvas, 0.1..1; absent = original. Implies centre position. */
  scale?: number;
  /** Subject position as percentages of free space (0..100); absent = original (or centre with scale). */
  position?: { x: number; y: number };
  roi?: Roi;
  /** Edge-aware matte refinement at full resolution (default on). false = plain bilinear upscaling, no matting. */
  refine: boolean;
  /** Colour-model matting of the soft edge band after refinement (default on; only with refine). */
  matting: boolean;
  /** Foreground colour estimation for semi-transparent pixels (default on). */
  decontaminate: boolean;
}

export const DEFAULT_OPTIONS: Readonly<RemoveOptions> = Object.freeze({
  size: 'full',
  format: 'png',
  channels: 'rgba',
  crop: false,
  refine: true,
  matting: true,
  decontaminate: true,
});

/** Subject bounding box in output coordinates. */
export interface Box {
  top: number;
  left: number;
  width: number;
  height: number;
}

export type ContentType = 'image/png' | 'image/jpeg' | 'image/webp' | 'application/zip';

export interface RemoveSuccess {
  ok: true;
  data: Uint8Array;
  contentType: ContentType;
  width: number;
  height: number;
  inputWidth: number;
  inputHeight: number;
  foreground: Box;
  /** Milliseconds per stage, for logs and benchmarks. */
  timings: Record<string, number>;
}

/** Stable error codes; the public ones are remove.bg's. */
export type RemoveErrorCode =
  | 'failed_to_read_image'
  | 'invalid_file_type'
  | 'resolution_too_high'
  | 'file_too_large'
  | 'failed_bg_image'
  | 'roi_exceeds_bounds'
  | 'roi_region_empty'
  | 'internal_error';

export interface RemoveFailure {
  ok: false;
  code: RemoveErrorCode;
  message: string;
}

export type RemoveResult = RemoveSuccess | RemoveFailure;

/** What the main thread sends to a worker. `input` travels in the transfer list. */
export interface RemoveTask {
  input: Uint8Array;
  options: RemoveOptions;
  /** The task's slot in the process's decode memory (src/pool/decode-memory.ts); absent = not counted. */
  decodeSlot?: number;
}

/**
 * What the first look at a photo decided (the staged GPU path carries it from stage 1 to stage 2):
 * its oriented size, the output size for the tier, and the ROI in output pixels.
 */
export interface RemovalPlan {
  inputWidth: number;
  inputHeight: number;
  hasAlpha: boolean;
  width: number;
  height: number;
  /** [x1, y1, x2, y2) in output pixels. */
  roi?: [number, number, number, number];
  /** Estimated bytes each decode holds at its peak (src/worker/decode-budget.ts): source and result. */
  decodeBytes: { model: number; output: number; background: number };
  /**
   * A small RGBA size covering both the model input and the output, aspect kept, with its decode's
   * estimate: where the source is costly to decode (held whole) and the output small, the CPU path
   * decodes it once, to this size, and resizes both from it in memory.
   */
  working?: { width: number; height: number; bytes: number };
}

/** Stage 1 of the staged (batched) path: the model-sized RGB bytes for the batch, and the plan. */
export interface PreparedRemoval {
  ok: true;
  plan: RemovalPlan;
  /** Model-sized uint8 RGB (HWC), for one slot of an inference batch. Transferable. */
  modelInput: Uint8Array;
  /** The task's input bytes, handed back (by transfer) for stage 2's full-size decode. */
  input: Uint8Array;
  timings: Record<string, number>;
}

export type PrepareResult = PreparedRemoval | RemoveFailure;

/** Stage 2 of the staged path: decode at output size, apply the model's mask, lay out, encode. */
export interface FinishTask {
  input: Uint8Array;
  options: RemoveOptions;
  plan: RemovalPlan;
  /** The model's output for this photo (model width × height floats, 0..1). Transferable. */
  mask: Float32Array;
  timings: Record<string, number>;
  decodeSlot?: number;
}

export const MAX_INPUT_BYTES = 22 * 1024 * 1024;
export const MAX_INPUT_PIXELS = 50_000_000;
/** Longest side accepted, in pixels: the addon's buffers and passes take 1..65536 per side. */
export const MAX_INPUT_SIDE = 65_536;
/**
 * Most memory one decode may make libvips hold for its source, estimated from the header
 * (src/worker/decode-budget.ts): a frame it must decode whole (an interlaced PNG, a progressive
 * JPEG's coefficients, a WebP), plus the rows of a streamed read. Over it: 400 resolution_too_high
 * before any pixel is decoded. 320 MB takes every 8-bit JPEG (4:2:0), PNG and interlaced RGB PNG up
 * to 50 MP at any size tier; it refuses a 7000x7000 interlaced 16-bit RGBA PNG (~490 MB), and
 * progressive 4:4:4 JPEGs over ~40 MP, WebPs over ~41–47 MP, 16-bit interlaced PNGs over ~15–30 MP
 * (the table in docs/memory.md, "Decoding"). The decoded result at output size (4 bytes a pixel,
 * bounded by the size tier) comes on top.
 */
export const MAX_DECODE_BYTES = 320 * 1024 * 1024;
/**
 * Decode memory held at once by all the photo workers of a process (the estimates of the decodes
 * in flight, source and result): a photo whose decode would pass it waits until others finish.
 * One decode alone is always let through, so nothing waits for ever.
 */
export const MAX_DECODE_BYTES_IN_FLIGHT = 1024 * 1024 * 1024;

/** Pixel caps per size tier (remove.bg's table; full/4k = 25 MP for every format here). */
export const TIER_MAX_PIXELS: Readonly<Record<SizeTier, number>> = Object.freeze({
  preview: 250_000,
  medium: 1_500_000,
  hd: 4_000_000,
  full: 25_000_000,
  '50MP': 50_000_000,
});
