// How much memory `cutout serve` needs: a base for the process, the model (loaded once per process
// and shared by every worker), a little per extra worker thread, and each worker's working memory
// while it removes a background. Pure arithmetic over measured constants; `cutout serve` prints it.
//
// Measured with `node dist/bench/memory.js` (bench/memory.ts: RSS from /proc/PID/status) on the
// project's reference box: 2-core AMD EPYC (Zen 4, AVX-512 VNNI), Node 20.20.2, glibc 2.36, ONNX
// Runtime 1.29.0, sharp 0.35.5; `cutout serve` idle after start with 1 and 2 workers, then 30 requests at
// concurrency 4 over 5 photos (0.45 to 20.4 MP) at preview and full size (docs/memory.md).
import { modelEntry } from '../model/manifest.js';
import { DEFAULT_MEMORY_RELEASE, type MemoryRelease } from './memory-release.js';

/**
 * Node, the main thread (uWS, LMDB), libvips, the ONNX Runtime library and one worker thread, without a
 * model. With isnet-int8: 86 + 72 = 158 against 157–158 MB measured idle (settled) on 2026-11-27 on the
 * AVX2 box (docs/memory.md, "Figures"), either release policy.
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
// int8, `node dist/bench/memory.js --requests 30` on 2026-11-27 (AVX2 box): 570 MB peak with the
// default 'idle' (413 above idle), 487 with 'every-task' (329). fp32's 'every-task' figure is the
// per-task release's of 2026-11-25 (650); its 'idle' one adds the kept tensors (+250) until measured.
export const MODEL_MEMORY: Readonly<Record<string, ModelMemory>> = Object.freeze({
  'isnet-int8': { loadedMb: 72, workMb: { idle: 413, 'every-task': 329 } },
  'isnet-fp32': { loadedMb: 193, workMb: { idle: 900, 'every-task': 650 } },
});

export interface MemoryEstimate {
  model: string;
  workers: number;
  /** RSS of an idle server. */
  idleMb: number;
  /** RSS to plan for under load: every worker busy at once. */
  peakMb: number;
  /** What one more worker adds to the peak. */
  perWorkerMb: number;
  /** False when the model has no measured figures and isnet-fp32's were used. */
  measured: boolean;
}

export function estimateMemory(model: string | undefined, workers: number, release: MemoryRelease = DEFAULT_MEMORY_RELEASE): MemoryEstimate {
  const name = model ?? modelEntry().name;
  const known = MODEL_MEMORY[name];
  const m = known ?? MODEL_MEMORY['isnet-fp32']!;
  const n = Math.max(1, Math.floor(workers));
  const work = m.workMb[release];
  const idleMb = BASE_MB + m.loadedMb + (n - 1) * EXTRA_WORKER_MB;
  return { model: name, workers: n, idleMb, peakMb: idleMb + n * work, perWorkerMb: EXTRA_WORKER_MB + work, measured: known !== undefined };
}

/** One line for `cutout serve`'s start-up banner. */
export function formatMemoryEstimate(e: MemoryEstimate): string {
  const round = (mb: number) => Math.ceil(mb / 10) * 10;
  const workers = `${e.workers} worker${e.workers === 1 ? '' : 's'}`;
  const basis = e.measured ? e.model : `${e.model}, figures of isnet-fp32`;
  return `memory: ~${round(e.idleMb)} MB idle, up to ~${round(e.peakMb)} MB busy with ${workers}, +${round(e.perWorkerMb)} MB per extra worker (${basis}; docs/memory.md)`;
}
