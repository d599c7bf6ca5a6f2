// The protocol between the pool (main thread) and its Piscina workers: each worker's workerData, a
// task, its result, the staged path's halves and the inference worker's batches. The one module
// pool/ and worker/ share: the workers import nothing else of pool/, and pool/ no module of worker/.
// The vocabulary they carry (options, box, limits) is domain/removal.ts.
// Everything here must survive structured cloning: plain objects, numbers, strings, typed arrays.

import type { Box, ContentType, QualityLevel, RemoveOptions } from '../domain/removal.js';
import type { BatchSessionOptions, SessionOptions } from '../model/manifest.js';
import type { DecodeMemoryShare } from '../process/decode-memory.js';
import type { MemoryRelease } from '../domain/memory-release.js';

export type { MemoryRelease };

export interface RemoveSuccess {
  ok: true;
  data: Uint8Array;
  contentType: ContentType;
  width: number;
  height: number;
  inputWidth: number;
  inputHeight: number;
  /** The subject's box, remove.bg's meaning (domain/removal.ts: Box). */
  foreground: Box;
  /** Milliseconds per stage, for logs and benchmarks. */
  timings: Record<string, number>;
}

/** Stable error codes; the public ones are remove.bg's. */
export type RemoveErrorCode =
  | 'failed_to_read_image'
  | 'invalid_file_type'
  | 'resolution_too_high'
  | 'failed_bg_image'
  | 'roi_exceeds_bounds'
  | 'roi_region_empty'
  | 'internal_error';

export interface RemoveFailure {
  ok: false;
  code: RemoveErrorCode;
  /** The client's words (the error's detail). */
  message: string;
  /** The operator's: the library's own words where they differ (a decoder's), for the request log. */
  cause?: string;
}

export type RemoveResult = RemoveSuccess | RemoveFailure;

/** What the main thread sends to a worker. `input` travels in the transfer list. */
export interface RemoveTask {
  input: Uint8Array;
  options: RemoveOptions;
  /** The task's slot in the process's decode memory (src/process/decode-memory.ts); absent = not counted. */
  decodeSlot?: number;
  /** Threads this task's photo passes may use, set by the pool as it starts (src/pool/photo-threads.ts); absent = the worker's own. */
  threads?: number;
  /**
   * Staged path, `prepare`: memory a finished photo handed back (src/pool/spare-photos.ts), for a
   * plain photo decoded once to decode into when it is big enough. Transferred.
   */
  photoMemory?: ArrayBuffer;
}

/**
 * What the first look at a photo decided (the staged GPU path carries it from stage 1 to stage 2):
 * its oriented size, the output size for the tier, and the ROI in output pixels.
 */
export interface RemovalPlan {
  inputWidth: number;
  inputHeight: number;
  hasAlpha: boolean;
  /** codec.Probe's plainRgb: a decode at its own size goes straight into memory of our own (codec.decodeRgbaOwned). */
  plainRgb?: true;
  width: number;
  height: number;
  /** [x1, y1, x2, y2) in output pixels. */
  roi?: [number, number, number, number];
  /** Estimated bytes each decode holds at its peak (src/worker/decode-budget.ts): source and result. */
  decodeBytes: { model: number; output: number; background: number };
  /** The most any of the photo's decodes holds of its source (decode-budget.ts): a source held whole is big. */
  decodeSource: number;
  /**
   * A small RGBA size covering both the model input and the output, aspect kept, with its decode's
   * estimate: where the source is costly to decode (held whole) and the output small, the CPU path
   * decodes it once, to this size, and resizes both from it in memory.
   */
  working?: { width: number; height: number; bytes: number };
  /**
   * The photo decoded once, RGBA at its own size (the output size), and the model input resized from
   * it in memory: set for an opaque photo whose output is its own size, where the model input is made
   * in memory anyway (the model enlarges it, codec.ts) or the photo is up to OVERLAP_DECODE_MAX_BYTES
   * (pipeline.ts; LEAN_… in a lean pool). Staged path: stage 1 decodes it and hands it to stage 2,
   * which then decodes nothing; `bytes`, what stage 1 then holds (the decode, the model input, the
   * copy handed on), in place of `decodeBytes.model`. CPU path: in place of the model's decode and
   * the output decode beside the model, where that one would overlap.
   */
  singleDecode?: { bytes: number };
}

/** Stage 1 of the staged (batched) path: the model-sized RGB bytes for the batch, and the plan. */
export interface PreparedRemoval {
  ok: true;
  plan: RemovalPlan;
  /** Model-sized uint8 RGB (HWC), for one slot of an inference batch. Transferable. */
  modelInput: Uint8Array;
  /** The task's input bytes, handed back (by transfer) for stage 2's full-size decode. */
  input: Uint8Array;
  /** With plan.singleDecode: the photo decoded, RGBA at output size, for stage 2. Transferable (its whole ArrayBuffer). */
  photo?: Uint8Array;
  /** The task's photoMemory where the photo did not go into it (too small, not a plain photo): handed back. */
  unusedMemory?: ArrayBuffer;
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
  /** Stage 1's decode of the photo (plan.singleDecode): used instead of decoding `input` again. */
  photo?: Uint8Array;
  timings: Record<string, number>;
  decodeSlot?: number;
  /** As RemoveTask's: set by the pool as the stage starts. */
  threads?: number;
}

/** What a photo worker's `finish` hands back: the removal, and the mask's buffer for the next batch to fill. */
export interface FinishReply {
  result: RemoveResult;
  /** The task's mask buffer once the composite is done with it (transferred back). */
  spareMask?: ArrayBuffer;
  /** The task's photo's buffer (stage 1's decode) once the photo is finished (transferred back). */
  sparePhoto?: ArrayBuffer;
}

/** A photo worker's workerData (worker/worker.ts). */
export interface WorkerConfig extends SessionOptions {
  mode: 'whole' | 'stages';
  modelPath: string;
  /** Threads one photo's composite passes and PNG deflate may use. */
  photoThreads: number;
  /** The process's decode memory, shared by every photo worker (src/process/decode-memory.ts). */
  decodeMemory?: DecodeMemoryShare;
  /** The quality level of tasks that name none (PoolOptions.quality). */
  quality?: QualityLevel;
  /** This thread's nice value (PoolOptions.photoNice), set before the session starts its threads. */
  nice?: number;
  /** When this worker hands its memory back (src/pool/idle-release.ts; default 'idle'). */
  memoryRelease?: MemoryRelease;
}

/** The inference worker's workerData and messages (worker/infer-worker.ts). */
export interface InferWorkerConfig extends BatchSessionOptions {
  modelPath: string;
  /** Run every bucket once at start (default true; tests of the scheduler turn it off). */
  warmUp?: boolean;
}

export interface InferBatch {
  images: Uint8Array[];
  /** Masks of earlier batches handed back (transferred here), filled instead of new ones where given. */
  outputs?: Float32Array[];
}

export interface InferBatchResult {
  masks: Float32Array[];
  /** Wall time of the batch run, ms. */
  ms: number;
  /** The bucket the batch was padded to. */
  batch: number;
  /** Masks written into the `outputs` handed in. */
  reused: number;
}
