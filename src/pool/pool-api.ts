// The contract of the worker pool as seen by its callers (library API, CLI, HTTP layer).
import type { MemoryRelease } from '../domain/memory-release.js';
import type { MemoryLimit } from '../process/memory-limit.js';
import type { CudaProbe, DeviceChoice } from '../device/device.js';
import type { DeviceRequest } from '../domain/device-request.js';
import type { FifoQueueStats, RunEvents } from './fifo-queue.js';
import type { RemoveResult, RemoveTask } from './protocol.js';
import type { QualityLevel } from '../domain/removal.js';
import type { ModelFamily } from '../domain/model-family.js';
import type { ModelFileSize } from './memory-estimate.js';

export type { RunEvents } from './fifo-queue.js';

/** 'low': the sandbox's work: it waits behind every normal task and holds at most `lowPriorityPlaces`. */
export type RunPriority = 'normal' | 'low';

/** One inference batch of the staged path, reported when it has run (PoolOptions.onBatch). */
export interface BatchReport {
  /** Photos in it. */
  size: number;
  /** The bucket it was padded to; absent when the run failed. */
  bucket?: number;
  /** Wall time of the model run in the inference worker, ms; absent when the run failed. */
  ms?: number;
  /** Masks written into buffers that finished photos handed back (resident pages), not new ones; absent when the run failed. */
  reused?: number;
}

export interface PoolOptions {
  /** Worker threads (each runs one removal at a time). Default: 1 per 2 cores, at least 1. */
  workers?: number;
  /** ONNX Runtime intra-op threads per worker. Default: cores / workers. */
  threadsPerWorker?: number;
  /** Queued tasks beyond the running ones before run() rejects with code 'queue_full'. */
  maxQueue?: number;
  /** Model name from models/manifest.json; default: the manifest's default. */
  model?: string;
  /** `auto` (default), `cpu`, `cuda`, `cuda:N`: see device/device.ts. */
  device?: string | DeviceRequest;
  /** Path of an ONNX model file to load instead of the named model's (same input/output contract). */
  modelPath?: string;
  /**
   * A model file of the user's own (`--model-file`), checked at start against `modelFamily` and its
   * descriptor (src/model/families.ts); not with `model` or `modelPath`.
   */
  modelFile?: string;
  /** The model file's family (`--model-family`); default: the descriptor's `family`. */
  modelFamily?: ModelFamily;
  /** The model file's descriptor (`--model-descriptor`); default: `<modelFile>.json` when there is one. */
  modelDescriptor?: string;
  /**
   * A model file whose batch dimension is symbolic runs on the staged, batching path (several requests'
   * photos per inference run) when true; one photo per run on the whole-removal path when false.
   * Default: true on CUDA, false on the CPU (where a batch runs no faster per photo and holds more).
   * A file with a fixed batch of 1 always runs one photo per run.
   */
  fileBatching?: boolean;
  /** Batch models: most photos per inference batch (default DEFAULT_MAX_BATCH). */
  maxBatch?: number;
  /** Batch models: how long a free inference worker waits for a batch to fill, ms (default DEFAULT_BATCH_WAIT_MS). */
  batchWaitMs?: number;
  /** Batch models: inference workers sharing the model session (default INFER_WORKERS). */
  inferWorkers?: number;
  /** Nice value (0..19) of the photo workers' threads and of the threads they start (default 0). */
  photoNice?: number;
  /** CUDA provider options over ours, "key=value;key=value" (default: CUTOUT_CUDA_OPTIONS). */
  cudaOptions?: string;
  /** Batch models: run every batch size once at start (default true; scheduler tests turn it off). */
  warmUp?: boolean;
  /** What the machine has for CUDA (default: probed from the file system; tests pass a made-up machine). */
  probe?: CudaProbe;
  /** Low-priority removals in the pool at once, running or waiting, before 'share_full' (default: no cap). */
  lowPriorityPlaces?: number;
  /** Batch models: called with the size of every inference batch (metrics). */
  onBatch?: (batch: BatchReport) => void;
  /** Quality level of removals that name none (default DEFAULT_QUALITY, 'balanced'; docs/quality.md). */
  quality?: QualityLevel;
  /** When the workers hand their memory back: 'idle' (default) or 'every-task' (src/domain/memory-release.ts). */
  memoryRelease?: MemoryRelease;
  /**
   * The memory the process may use (src/process/memory-limit.ts): the CPU path sizes its workers and
   * release policy to fit, never changing what `workers` or `memoryRelease` gave, and fails to start
   * (MemoryLimitError) when those cannot fit (src/pool/memory-fit.ts). Default: not checked.
   */
  memoryLimit?: MemoryLimit;
  /**
   * The request inputs the process holds beside the pool (bodies, downloads), sized with it under
   * `memoryLimit`: exactly `bytes` when `given`, else fitted and never below `bytes` (PoolInfo.inputCeilingBytes).
   */
  inputs?: { bytes: number; given: boolean };
}

export interface PoolStats extends FifoQueueStats {
  workers: number;
}

/** What the pool runs on, for the start-up line and /healthz. */
export interface PoolInfo {
  device: DeviceChoice;
  model: string;
  /** The model's family (src/model/families.ts): 'isnet' for the bundled models. */
  modelFamily?: string;
  /** sha256 of the model file, where known (a bundled model's from the manifest or its .sha256 file). */
  modelSha256?: string;
  /** True for a model file of the user's own (`modelFile`): never given the manifest's licence facts, whatever its name. */
  ownModelFile?: boolean;
  /** A model file's size and input, which its memory estimate is made from (memory-estimate.ts). */
  modelFileSize?: ModelFileSize;
  /** A model file's batch dimension: 'fixed' (1) means one photo per inference run, whatever the device. */
  modelBatch?: 'symbolic' | 'fixed';
  /** A model file whose graph does not look like its family's (families.ts familyWarnings): said at start. */
  modelWarnings?: string[];
  workers: number;
  /** ONNX Runtime threads per worker on the CPU path; threads per photo on the staged path. */
  threadsPerWorker: number;
  /** The staged path's inference batching. */
  batching?: { maxBatch: number; maxWaitMs: number; inferWorkers: number };
  /** When the photo workers hand their memory back. */
  memoryRelease: MemoryRelease;
  /** What was changed to fit PoolOptions.memoryLimit, if anything (a line for the start-up banner). */
  memoryFit?: string;
  /** The request inputs' share of memoryLimit (memory-fit.ts inputCeilingFor), when one was fitted. */
  inputCeilingBytes?: number;
}

export interface RemovalPool {
  readonly info?: PoolInfo;
  /**
   * Run one removal. `task.input` is transferred (its ArrayBuffer is detached afterwards when it
   * owns the whole buffer). Resolves with a RemoveResult (typed failures are values, not throws).
   * Tasks start in arrival order (one FIFO per pool). Rejects with an Error whose `.code` is
   * 'queue_full' when the queue is at its limit, 'aborted' as soon as `signal` fires (a waiting
   * task is dropped; a running one finishes on its worker and its result is thrown away),
   * 'pool_closed', or 'worker_failed'. A success's `timings.queue` is its wait in ms.
   * A 'low' task waits behind every normal one and rejects with 'share_full' when low tasks already
   * hold `lowPriorityPlaces` places (running or waiting); it does not count against `maxQueue`.
   */
  run(task: RemoveTask, signal?: AbortSignal, events?: RunEvents, priority?: RunPriority): Promise<RemoveResult>;
  stats(): PoolStats;
  /** True once every worker has loaded the model. */
  readonly ready: boolean;
  close(): Promise<void>;
}

/** Retry-After for a busy pool: the backlog per worker, at about a second a photo. */
export function backlogSeconds(stats: PoolStats): number {
  return 1 + Math.ceil((stats.queued + stats.running) / Math.max(1, stats.workers));
}
