// The contract of the worker pool as seen by its callers (library API, CLI, HTTP layer).
import type { RemoveResult, RemoveTask } from './task.js';

export interface PoolOptions {
  /** Worker threads (each runs one removal at a time). Default: 1 per 2 cores, at least 1. */
  workers?: number;
  /** ONNX Runtime intra-op threads per worker. Default: cores / workers. */
  threadsPerWorker?: number;
  /** Queued tasks beyond the running ones before run() rejects with code 'queue_full'. */
  maxQueue?: number;
  /** Model name from models/manifest.json; default: the manifest's default. */
  model?: string;
  /** Path of an ONNX model file to load instead of the named model's (same input/output contract). */
  modelPath?: string;
}

export interface PoolStats {
  workers: number;
  running: number;
  queued: number;
}

export interface RemovalPool {
  /**
   * Run one removal. `task.input` is transferred (its ArrayBuffer is detached afterwards when it
   * owns the whole buffer). Resolves with a RemoveResult (typed failures are values, not throws).
   * Rejects with an Error whose `.code` is 'queue_full' when the queue is at its limit, or
   * 'aborted' when `signal` fired while the task was still queued.
   */
  run(task: RemoveTask, signal?: AbortSignal): Promise<RemoveResult>;
  stats(): PoolStats;
  /** True once every worker has loaded the model. */
  readonly ready: boolean;
  close(): Promise<void>;
}
