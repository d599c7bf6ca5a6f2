// The vocabulary of a removal, shared by every layer: the HTTP transport and API, the ledger, the
// pool and its workers, the library and the CLI. Options, size tiers, limits, the foreground box.
// Pure, imports nothing; everything here survives structured cloning (it travels to the workers).

/** Output size tier after aliases are resolved (`small`/`regular` → preview, `4k` → full). */
export type SizeTier = 'preview' | 'medium' | 'hd' | 'full' | '50MP';

/** A size as asked for: a tier, or `auto` (the ledger picks the tier the account can pay for). */
export type RequestedSize = SizeTier | 'auto';

/** Requested output container. `auto` → PNG when the result has transparency, else JPEG. */
export type OutputFormat = 'auto' | 'png' | 'jpg' | 'webp' | 'zip';

export type Channels = 'rgba' | 'alpha';

export const SIZE_TIERS: readonly SizeTier[] = Object.freeze(['preview', 'medium', 'hd', 'full', '50MP']);
export const OUTPUT_FORMATS: readonly OutputFormat[] = Object.freeze(['auto', 'png', 'jpg', 'webp', 'zip']);
export const CHANNELS: readonly Channels[] = Object.freeze(['rgba', 'alpha']);

/**
 * How much work a removal may spend on quality (docs/quality.md, "Quality levels"): `fast`, `balanced`
 * (the default) or `best`. What each runs depends on the device (src/worker/quality-level.ts).
 */
export type QualityLevel = 'fast' | 'balanced' | 'best';
export const QUALITY_LEVELS: readonly QualityLevel[] = Object.freeze(['fast', 'balanced', 'best']);
export const DEFAULT_QUALITY: QualityLevel = 'balanced';

/** The level named by `value`, or undefined when it names none (CLI flags, env, library options). */
export function parseQuality(value: unknown): QualityLevel | undefined {
  return typeof value === 'string' && (QUALITY_LEVELS as readonly string[]).includes(value) ? (value as QualityLevel) : undefined;
}

/** What a result's bytes are. */
export type ContentType = 'image/png' | 'image/jpeg' | 'image/webp' | 'application/zip';

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

/** The most a crop margin may add on one side (remove.bg: 50% of the subject's size or 500 px). */
export const MAX_CROP_MARGIN: Readonly<{ px: number; percent: number }> = Object.freeze({ px: 500, percent: 50 });

/** The smallest `scale` (the subject's share of the canvas; at most 1 = 100%). */
export const MIN_SCALE = 0.1;

/** Region of interest in input coordinates: only pixels inside can be foreground. */
export interface Roi {
  x1: Length;
  y1: Length;
  x2: Length;
  y2: Length;
}

/** Normalised, validated options for one removal. Validation happens at the edge (api/params/, lib, cli). */
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
  /** Quality level; absent = the pool's (serve --quality / CUTOUT_QUALITY, else DEFAULT_QUALITY). */
  quality?: QualityLevel;
  /** Shadow drawn under the subject from its matte; absent = none (as is opacity 0). */
  shadow?: ShadowOptions;
}

/** remove.bg's shadow kinds (`shadow_type`): a soft offset drop, a cast ground shadow, a vehicle's contact shadow. */
export type ShadowType = 'drop' | '3D' | 'car';

export interface ShadowOptions {
  type: ShadowType;
  /** Darkest shadow alpha as a percentage, 1..100 (remove.bg's `shadow_opacity`). */
  opacity: number;
}

export const SHADOW_TYPES: readonly ShadowType[] = Object.freeze(['drop', '3D', 'car']);

/** The kind named by `value` in any case (`3d` is `3D`), or undefined when it names none (CLI flags, library options). */
export function parseShadowType(value: unknown): ShadowType | undefined {
  return typeof value === 'string' ? SHADOW_TYPES.find((k) => k.toLowerCase() === value.toLowerCase()) : undefined;
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

/**
 * A box in pixels. As a result's `foreground` it has remove.bg's meaning (X-Foreground-* and
 * `foreground_*`, REMOVEBG-API.md §2: "in case the input image resolution is higher than the limit,
 * expressed with respect to the input image resolution"): the subject's bounding box in the result,
 * in pixels of the input's resolution. When the output was not downscaled those are the result's own
 * pixels; when the size tier downscaled it, the result's pixels times input size ÷ output size.
 * Without crop, scale or position it is the subject's box in the input photo. Computed once, in the
 * worker (worker/geometry.ts: atInputResolution); the library and the HTTP API hand it on as is.
 */
export interface Box {
  top: number;
  left: number;
  width: number;
  height: number;
}

/** Largest image accepted, in bytes (remove.bg: 22 MB): uploads, base64 and downloads alike. */
export const MAX_INPUT_BYTES = 22 * 1024 * 1024;
/** Largest input accepted, in pixels (remove.bg: 50 MP). */
export const MAX_INPUT_PIXELS = 50_000_000;
/** Longest side accepted, in pixels: the addon's buffers and passes take 1..65536 per side. */
export const MAX_INPUT_SIDE = 65_536;

/**
 * Largest output (RGBA bytes) decoded while the model runs, on a libvips thread beside ONNX
 * Runtime's: 64 MiB, up to 16 MP. It hides the decode behind inference (a 12 MP photo: ~190 ms less
 * on 2 AVX2 cores, with the same inference time). Bigger photos are decoded after it: at 20 MP that
 * keeps 80 MB off the peak of `cutout remove` (≤ 400 MB) for ~110 ms more per photo (docs/memory.md).
 * Also the largest opaque photo either path decodes once at its own size for both the model input
 * and the output (plan.singleDecode; docs/memory.md, "Decoding"), and so the largest photo memory the
 * staged pool keeps for the next photo (pool/spare-photos.ts).
 */
export const OVERLAP_DECODE_MAX_BYTES = 64 * 1024 * 1024;

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

/**
 * Request inputs held in memory at once by a process: the bodies read and the images downloaded of
 * every request not yet answered (queued ones included), counted from their first byte. Over it: 503
 * service_busy. `--body-memory-bytes` sets it; under a memory limit it shrinks to fit (pool/memory-fit.ts).
 */
export const MAX_INPUT_BYTES_IN_MEMORY = 256 * 1024 * 1024;

/** Pixel caps per size tier (remove.bg's table; full/4k = 25 MP for every format here). */
export const TIER_MAX_PIXELS: Readonly<Record<SizeTier, number>> = Object.freeze({
  preview: 250_000,
  medium: 1_500_000,
  hd: 4_000_000,
  full: 25_000_000,
  '50MP': 50_000_000,
});
