// Typed facade over the native addon (build/Release/cutout.node). Only worker/ and tests load it.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { ADDON_PATH } from './addon-path.js';
import type { BatchSessionOptions, SessionOptions } from '../model/manifest.js';
import type { ShadowOptions } from '../domain/removal.js';

export { ADDON_PATH } from './addon-path.js';
export { sessionOptionsFor, type BatchSessionOptions, type SessionOptions } from '../model/manifest.js';

export interface CompositeOptions {
  /** Guided refinement; false = plain bilinear upscaling (and no matting). */
  refine: boolean;
  /** Colour-model matting after the refinement (native/src/matting.h); absent = on. Ignored without refine. */
  matting?: boolean;
  decontaminate: boolean;
  /** [x1, y1, x2, y2) in output pixels. */
  roi?: [number, number, number, number];
  /** Guided-filter tuning (benchmarks); defaults in native/src/refine.h. */
  refineRadius?: number;
  refineEps?: number;
  /** The stages' constants, for benchmarks that tune them (bench/quality-cv.ts); absent fields keep the defaults. */
  tuning?: CompositeTuning;
  /**
   * Threads for the full-resolution passes, the calling thread included: an integer 1..64, absent = 1.
   * The output is the same bytes for any count; images under 64K pixels always use one (docs/native.md).
   */
  threads?: number;
  /** Benchmarks: the result carries each stage's wall time in ms (`NativeBox.timings`). */
  timings?: boolean;
}

/** Names as in native/src/{refine,matting,foreground}.h (RefineParams, MattingParams, ForegroundParams). */
export interface CompositeTuning {
  refine?: { radius?: number; eps?: number; bandLo?: number; bandHi?: number; bandDilate?: number };
  matting?: {
    sureBg?: number;
    sureFg?: number;
    bandDilate?: number;
    sigma?: number;
    minSupport?: number;
    confidenceMin?: number;
    confidenceRange?: number;
  };
  foreground?: {
    regularization?: number;
    gradientWeight?: number;
    smallIterations?: number;
    bigIterations?: number;
    smallSize?: number;
    maxWorkingPixels?: number;
  };
}

export interface NativeBox {
  top: number;
  left: number;
  width: number;
  height: number;
  /** With the `timings` option: each composite stage's wall time, ms. */
  timings?: CompositeStageTimes;
}

/** native/src/composite.h CompositeTimings (foreground: the colour estimate, or zeroing under alpha 0). */
export interface CompositeStageTimes {
  upsample: number;
  refine: number;
  matting: number;
  roi: number;
  foreground: number;
  box: number;
}

export interface PngEncodeOptions {
  /** zlib level 0..9 (0 = stored). With strategy 'rle' or 'fast' only 0 versus 1..9 matters. */
  level: number;
  /** Threads for the deflate, 1..64. The output bytes are the same for any count. */
  threads: number;
  /**
   * 'default' (zlib's LZ77 at `level`, the default), 'rle' (zlib's Z_RLE: 2–3x faster) or 'fast' (no
   * zlib: per-row filter choice, runs as matches, one Huffman code per strip; several times faster
   * again). With 'rle' and 'fast' only level 0 (stored) versus 1..9 matters (docs/native.md, "PNG encoding").
   */
  strategy?: 'default' | 'rle' | 'fast';
}

export interface NativeSession {
  /** Preprocess a model-sized RGB/RGBA image into the input tensor and run the model. Returns the output tensor (owned by the session, overwritten by the next call). */
  infer(pixels: Uint8Array, channels: 3 | 4): Float32Array;
  /** Write the last mask into `rgba`'s alpha in place (upscaled, optionally refined/matted/decontaminated). */
  composite(rgba: Uint8Array, width: number, height: number, options: CompositeOptions): NativeBox;
  close(): void;
  /**
   * The input and output tensors' pages back to the system (16 MB at 1024²): the pool's idle release.
   * They read as zeros until the next infer(), which composite() then needs first.
   */
  releaseTensors(): void;
  readonly inputTensor: Float32Array;
  readonly outputTensor: Float32Array;
}

/** A batch-capable model (uint8 [N, H, W, 3] in, float [N, 1, H, W] out; or a model file's float input with a symbolic batch, normalised per photo) run on several photos at once. */
export interface NativeBatchSession {
  /**
   * Model-sized RGB photos (height × width × 3 bytes each, 1..maxBatch) → one mask each, each with its own ArrayBuffer:
   * `outputs[i]` where given (width × height floats: an earlier batch's mask handed back, its pages resident), else a new one.
   */
  run(images: Uint8Array[], outputs?: Float32Array[]): Float32Array[];
  /** Runs every bucket once (cuDNN tunes per shape); returns ms per bucket. */
  warmUp(): number[];
  /** Batch sizes a run is padded to: powers of two up to maxBatch, and maxBatch. */
  readonly buckets: number[];
  /** Whether the host buffers are page-locked (CUDA pinned). */
  readonly pinned: boolean;
  /** Why page-locked buffers were given up after a failed run (ONNX Runtime's message), else null. */
  readonly pinnedError: string | null;
  close(): void;
}

/** What binding.probeHeader reads of an image's header. */
export interface HeaderFacts {
  format: 'jpeg' | 'png' | 'webp';
  width: number;
  height: number;
  bands: number;
  /** VipsBandFormat: 0 uchar, 1 char, 2 ushort, 3 short, 4 uint, 5 int, 6 float, 7 complex, 8 double, 9 dpcomplex. */
  bandFormat: number;
  /** VipsInterpretation (22: sRGB). */
  interpretation: number;
  hasAlpha: boolean;
  hasProfile: boolean;
  orientation: number;
  interlaced: boolean;
  chromaSubsampling?: string;
}

export interface NativeBinding {
  Session: new (modelPath: string, options: SessionOptions) => NativeSession;
  BatchSession: new (modelPath: string, options: BatchSessionOptions) => NativeBatchSession;
  preprocess(src: Uint8Array, width: number, height: number, channels: 3 | 4, dst: Float32Array, mean: number[], std: number[]): void;
  /**
   * 8-bit RGB or RGBA pixels resized (stretched) to dstWidth×dstHeight RGB: Catmull-Rom cubic,
   * antialiased where an axis shrinks (native/src/resize.h). Alpha is dropped. `dst` must not share
   * memory with `src`; `threads` (1..64, default 1) never changes the bytes.
   */
  resizeToRgb(src: Uint8Array, width: number, height: number, channels: 3 | 4, dst: Uint8Array, dstWidth: number, dstHeight: number, threads?: number): void;
  upsampleMask(mask: Float32Array, maskWidth: number, maskHeight: number, dst: Uint8Array, width: number, height: number, step: number): void;
  flattenOnColor(rgba: Uint8Array, r: number, g: number, b: number, a: number): void;
  blendOver(rgba: Uint8Array, background: Uint8Array): void;
  extractAlpha(rgba: Uint8Array, dst: Uint8Array): void;
  /**
   * Draws a shadow from the alpha of a finished width × height RGBA cut-out, in place, on the calling
   * thread (native/src/shadow.h): 'drop' (offset and blurred), '3D' (cast forward onto the ground from
   * the contact line) or 'car' (a contact shadow under the lowest part). The subject goes over the
   * shadow: opaque pixels keep their bytes, transparent ones become black with the shadow's alpha (at
   * most opacity × 255 / 100). Opacity 0, or no pixel with alpha ≥ 128, changes nothing. Throws
   * ERR_CUTOUT_ARG / ERR_CUTOUT_BAD_LENGTH TypeErrors for broken arguments, ERR_CUTOUT_DETACHED for a
   * detached buffer.
   */
  drawShadow(rgba: Uint8Array, width: number, height: number, options: { type: ShadowOptions['type']; opacity: number }): void;
  /**
   * A plain JPEG, PNG or WebP (codec.Probe's plainRgb) decoded straight into `dst` (width × height × 4
   * bytes, RGBA): the bytes of codec.decodeRgba at full size. A PNG by the addon's own decoder where it
   * checks out whole (decodePlainPng), every other file by the libvips sharp loaded into this process.
   * False where it cannot (libvips not loaded, the photo not plain after all): decode through sharp.
   * Throws ERR_CUTOUT_DECODE with libvips' message for bytes that do not decode (truncated included).
   */
  decodePlainRgba(input: Uint8Array, width: number, height: number, dst: Uint8Array): boolean;
  /**
   * The addon's PNG decoder alone: true when `input` is an 8-bit RGB PNG of width × height, not
   * interlaced, with no chunk that changes its pixels and every CRC, the stream and IEND in order,
   * now in `dst` (RGBA, alpha 255); false (dst unspecified) for any other file, left to libvips.
   */
  decodePlainPng(input: Uint8Array, width: number, height: number, dst: Uint8Array): boolean;
  /**
   * libvips' header of a JPEG, PNG or WebP, read on the calling thread without decoding pixels (the
   * fields sharp's metadata() reads from the same image; bandFormat and interpretation as libvips'
   * enums, orientation 0 where there is none); null where libvips is not loaded, the bytes are
   * another format or libvips refuses the header: ask sharp, which says why.
   */
  probeHeader(input: Uint8Array): HeaderFacts | null;
  /** Whether decodePlainRgba found libvips' C API in this process. */
  libvipsDecodeAvailable(): boolean;
  /** 8-bit grey, grey+alpha, RGB or RGBA rows → PNG bytes (strips filtered and deflated on `threads` threads). The result alone owns its ArrayBuffer, so it can be transferred. */
  encodePng(pixels: Uint8Array, width: number, height: number, channels: 1 | 2 | 3 | 4, options: PngEncodeOptions): Uint8Array;
  /**
   * What `session.composite` does, with a mask the caller passes in (e.g. one a GPU pipeline got back
   * on another thread): upscales the `maskWidth`×`maskHeight` float mask (0..1) into `rgba`'s alpha in
   * place, refines, mattes, applies the ROI and decontaminates as `options` say, and returns the
   * subject's box. Same mask and options as `session.composite` → the same bytes. `mask` must not share
   * memory with `rgba`. Throws ERR_CUTOUT_ARG / ERR_CUTOUT_BAD_LENGTH TypeErrors for broken arguments,
   * ERR_CUTOUT_DETACHED for a detached buffer, ERR_CUTOUT_COMPOSITE when scratch memory runs out.
   */
  compositeMask(
    rgba: Uint8Array,
    width: number,
    height: number,
    mask: Float32Array,
    maskWidth: number,
    maskHeight: number,
    options: CompositeOptions,
  ): NativeBox;
  loadedModels(): number;
  /**
   * The process's block cache (native/src/scratch.h: the composite passes' scratch and ONNX Runtime's
   * tensors): with `limitBytes`, sets how many bytes of free blocks the process keeps mapped for the
   * next photo or model run (default 1 GiB; 0: none, each block unmapped when freed). Returns the
   * limit and the bytes cached now.
   */
  /** The block cache: its limit, free bytes kept (and how many of them are resident), bytes taken now and the most taken since the last call (each call resets that). */
  scratchCache(limitBytes?: number): { limit: number; cached: number; cachedResident: number; inUse: number; peakInUse: number };
  /** Unmaps every free block of the cache; returns the bytes released. */
  releaseScratch(): number;
  /** Bytes ONNX Runtime holds from the block cache now: its weights and the tensors of runs under way. */
  ortBytesInUse(): number;
  /** malloc_trim(0): hand the free pages of every malloc arena back to the system. True when some were released. */
  trimMemory(): boolean;
  /** The fixed glibc mmap threshold set when the addon loaded (4 MiB; docs/memory.md), or null when CUTOUT_MALLOC_TUNING=off. */
  readonly mmapThreshold: number | null;
  readonly ortVersion: string;
}

let cached: NativeBinding | undefined;

export function loadBinding(): NativeBinding {
  if (cached) return cached;
  if (!fs.existsSync(ADDON_PATH)) {
    throw Object.assign(new Error(`The native addon is not built (${ADDON_PATH} is missing): run 'npm run build:native'`), {
      code: 'ERR_CUTOUT_ADDON_MISSING',
    });
  }
  const require = createRequire(import.meta.url);
  cached = require(ADDON_PATH) as NativeBinding;
  return cached;
}
