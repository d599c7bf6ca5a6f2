// How much memory `cutout serve` needs: a base for the process, the model (loaded once per process
// and shared by every worker), a little per extra worker thread, and each worker's working memory
// while it removes a background. Pure arithmetic over measured constants; `cutout serve` prints it.
//
// Measured with `node dist/bench/memory.js` (bench/memory.ts: RSS from /proc/PID/status) on the
// project's reference box: 2-core AMD EPYC (Zen 4, AVX-512 VNNI), Node 20.20.2, glibc 2.36, ONNX
// Runtime 1.29.0, sharp 0.35.5; `cutout serve` idle after start with 1 and 2 workers, then 30 requests at
// concurrency 4 over 5 photos (0.45 to 20.4 MP) at preview and full size (docs/memory.md).
import { modelEntry } from '../model/manifest.js';
import { DEFAULT_MEMORY_RELEASE, type MemoryRelease } from '../domain/memory-release.js';

/**
 * Node, the main thread (uWS, LMDB), libvips, the ONNX Runtime library and one worker thread, without a
 * model. With isnet-int8: 86 + 72 = 158 against 157–158 MB measured idle (settled) on the AVX2
 * box (docs/memory.md, "Figures"), either release policy.
 */
export const BASE_MB = 86;

/** Each worker thread after the first, idle (its V8 isolate and sharp's per-thread state). */
export const EXTRA_WORKER_MB = 15;

export interface ModelMemory {
  /** Resident once the model is loaded (weights as ONNX Runtime keeps them, graph, kernels). */
  loadedMb: number;
  /**
   * Peak above idle while one worker removes backgrounds, full size up to 20 MP, 4 requests in flight,
   * per release policy: 'idle' keeps the model's tensors mapped beside the next photos while busy.
   */
  workMb: Readonly<Record<MemoryRelease, number>>;
}

/** Per shipped model; a model not listed is counted as isnet-fp32 (float activations, the larger). */
// int8, `node dist/bench/memory.js --requests 30` on the AVX2 box: 570 MB peak with the
// default 'idle' (413 above idle), 487 with 'every-task' (329). fp32's 'every-task' figure is the
// per-task release's own measurement (650); its 'idle' one adds the kept tensors (+250) until measured.
export const MODEL_MEMORY: Readonly<Record<string, ModelMemory>> = Object.freeze({
  'isnet-int8': { loadedMb: 72, workMb: { idle: 413, 'every-task': 329 } },
  'isnet-fp32': { loadedMb: 193, workMb: { idle: 900, 'every-task': 650 } },
});

/**
 * A model file of one's own (`--model-file`): no measured figures, so they are estimated from its
 * size and its input size (fileModelMemory).
 */
export interface ModelFileSize {
  name: string;
  fileBytes: number;
  inputWidth: number;
  inputHeight: number;
  /** Its fp16 weights' bytes, when it has any: ONNX Runtime's CPU provider widens them to float32. */
  float16WeightBytes?: number;
}

/** What an estimate is for: a bundled model's name (undefined: the manifest's default), or a file. */
export type EstimatedModel = string | undefined | ModelFileSize;

/**
 * A model file's loaded memory: the weights as ONNX Runtime keeps them plus ~20 MB of graph and
 * kernels (isnet-fp32's 168 MB file: 188 MB against 193 measured; isnet-int8's 42 MB: 63 against 72).
 * fp16 weights count twice: the CPU provider computes in float32 and keeps them widened (isnet-fp16's
 * 84 MB file loads 187 MB of anonymous memory, isnet-fp32's 196; file + fp16 bytes + 20 = 188).
 */
export const FILE_OVERHEAD_MB = 20;

/**
 * A worker's working memory, split in two from the measured figures above: the photo's buffers
 * (decode, composite, encode: the same for any model) and the model's activations, which grow with
 * its input's pixels. int8's activations are uint8 (a quarter of fp32's): 650 − 329 = ¾ A gives
 * fp32's A = 428 MB at 1024² per task, and 222 MB for the photo; 'idle' keeps the tensors (+250).
 * The activations per input pixel are ISNet's: a wider network (BiRefNet's Swin backbone) holds more.
 */
export const PHOTO_WORK_MB = 222;
export const ACTIVATIONS_MB_AT_1024: Readonly<Record<MemoryRelease, number>> = Object.freeze({ idle: 678, 'every-task': 428 });

/** The estimated figures of a model file (ModelFileSize). */
export function fileModelMemory(f: ModelFileSize): ModelMemory {
  const area = (f.inputWidth * f.inputHeight) / (1024 * 1024);
  const work = (release: MemoryRelease) => Math.ceil(PHOTO_WORK_MB + ACTIVATIONS_MB_AT_1024[release] * area);
  const weights = f.fileBytes + (f.float16WeightBytes ?? 0);
  return { loadedMb: Math.ceil(FILE_OVERHEAD_MB + weights / (1024 * 1024)), workMb: { idle: work('idle'), 'every-task': work('every-task') } };
}

export interface MemoryEstimate {
  model: string;
  /** Where the figures come from, for the banner: the model's name, or how they were estimated. */
  basis: string;
  workers: number;
  /** RSS of an idle server. */
  idleMb: number;
  /** RSS to plan for under load: every worker busy at once. */
  peakMb: number;
  /** What one more worker adds to the peak. */
  perWorkerMb: number;
  /** False when the model has no measured figures (isnet-fp32's were used, or a file's estimated). */
  measured: boolean;
}

export function estimateMemory(model: EstimatedModel, workers: number, release: MemoryRelease = DEFAULT_MEMORY_RELEASE): MemoryEstimate {
  const file = typeof model === 'object' ? model : undefined;
  const name = typeof model === 'object' ? model.name : (model ?? modelEntry().name);
  const known = file ? undefined : MODEL_MEMORY[name];
  const m = file ? fileModelMemory(file) : (known ?? MODEL_MEMORY['isnet-fp32']!);
  const basis = file
    ? `${name}, estimated from its ${Math.round(file.fileBytes / (1024 * 1024))} MB file${file.float16WeightBytes ? ' (fp16 weights counted as float32)' : ''} and ${file.inputWidth}×${file.inputHeight} input`
    : known
      ? name
      : `${name}, figures of isnet-fp32`;
  const n = Math.max(1, Math.floor(workers));
  const work = m.workMb[release];
  const idleMb = BASE_MB + m.loadedMb + (n - 1) * EXTRA_WORKER_MB;
  return { model: name, basis, workers: n, idleMb, peakMb: idleMb + n * work, perWorkerMb: EXTRA_WORKER_MB + work, measured: known !== undefined };
}

/** One line for `cutout serve`'s start-up banner. */
export function formatMemoryEstimate(e: MemoryEstimate): string {
  const round = (mb: number) => Math.ceil(mb / 10) * 10;
  const workers = `${e.workers} worker${e.workers === 1 ? '' : 's'}`;
  return `memory: ~${round(e.idleMb)} MB idle, up to ~${round(e.peakMb)} MB busy with ${workers}, +${round(e.perWorkerMb)} MB per extra worker (${e.basis}; docs/memory.md)`;
}
