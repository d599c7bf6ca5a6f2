// The Piscina pool that runs removals: sizing, readiness, queue tracking, abort and error mapping.
import os from 'node:os';
import { Piscina, ArrayTaskQueue, queueOptionsSymbol } from 'piscina';
import { modelEntry, sessionOptionsFor } from '../model/manifest.js';
import { verifyModelFile } from '../model/assemble.js';
import type { PoolOptions, PoolStats, RemovalPool } from './pool-api.js';
import type { RemoveResult, RemoveTask } from './task.js';
import type { WorkerConfig } from '../worker/worker.js';

export type { PoolOptions, PoolStats, RemovalPool } from './pool-api.js';

interface QueueState {
  queued: boolean;
}

type QueuedTask = Parameters<ArrayTaskQueue['push']>[0] & { [queueOptionsSymbol]?: QueueState | null };

/**
 * Marks tasks while they wait, so an abort can tell "still queued" (cheap to drop) from
 * "running" (aborting would kill the worker and its model: let it finish, drop the result).
 */
class TrackingQueue extends ArrayTaskQueue {
  override push(task: QueuedTask): void {
    const s = task[queueOptionsSymbol];
    if (s) s.queued = true;
    super.push(task);
  }
  override shift(): QueuedTask | null {
    const task = super.shift() as QueuedTask | null;
    const s = task?.[queueOptionsSymbol];
    if (s) s.queued = false;
    return task;
  }
  override remove(task: QueuedTask): void {
    const s = task[queueOptionsSymbol];
    if (s) s.queued = false;
    super.remove(task);
  }
}

export function defaultSizing(cores = os.availableParallelism()): { workers: number; threadsPerWorker: number } {
  const workers = Math.max(1, Math.floor(cores / 2));
  return { workers, threadsPerWorker: Math.max(1, Math.floor(cores / workers)) };
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

export async function createRemovalPool(opts: PoolOptions = {}): Promise<RemovalPool> {
  const sizing = defaultSizing();
  const workers = opts.workers ?? sizing.workers;
  const threads = opts.threadsPerWorker ?? Math.max(1, Math.floor(os.availableParallelism() / workers));
  const model = modelEntry(opts.model);
  const modelPath = opts.modelPath ?? model.path;
  if (!opts.modelPath && model.entry.sha256) verifyModelFile(modelPath, model.entry.sha256);

  const config: WorkerConfig = { modelPath, ...sessionOptionsFor(model.entry, threads) };
  const piscina = new Piscina({
    filename: new URL('../worker/worker.js', import.meta.url).href,
    minThreads: workers,
    maxThreads: workers,
    // Workers hold the model session: never let them idle out.
    idleTimeout: Number.MAX_SAFE_INTEGER,
    concurrentTasksPerWorker: 1,
    maxQueue: opts.maxQueue ?? Math.max(64, workers * workers),
    taskQueue: new TrackingQueue(),
    workerData: config,
    // libuv's pool is process-wide and shared by every worker's sharp calls.
    env: process.env,
  });

  let ready = false;
  let closed = false;
  let running = 0;
  // One ping per worker: each worker takes one task at a time, so N concurrent pings resolve
  // only once N workers have finished loading the model.
  try {
    await Promise.all(Array.from({ length: workers }, () => piscina.run(null, { name: 'ping' })));
  } catch (err) {
    await piscina.destroy();
    throw codedError('ERR_CUTOUT_POOL_START', `Worker pool failed to start: ${(err as Error).message}`);
  }
  ready = true;

  return {
    get ready() {
      return ready && !closed;
    },
    stats(): PoolStats {
      return { workers, running, queued: piscina.queueSize };
    },
    async run(task: RemoveTask, signal?: AbortSignal): Promise<RemoveResult> {
      if (closed) throw codedError('pool_closed', 'The worker pool is closed');
      if (signal?.aborted) throw codedError('aborted', 'The request was aborted before it started');
      const state: QueueState = { queued: false };
      const controller = new AbortController();
      const onAbort = (): void => {
        if (state.queued) controller.abort();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // Transfer the input when it owns its whole ArrayBuffer; otherwise it is cloned.
      const buf = task.input.buffer;
      const transferable = buf instanceof ArrayBuffer && buf.byteLength > 0 && task.input.byteOffset === 0 && task.input.byteLength === buf.byteLength;
      const payload = Object.assign({ input: task.input, options: task.options }, { [queueOptionsSymbol]: state });
      running++;
      try {
        return (await piscina.run(payload, {
          signal: controller.signal,
          ...(transferable ? { transferList: [buf] } : {}),
        })) as RemoveResult;
      } catch (err) {
        const e = err as Error & { code?: string; name?: string };
        if (e.name === 'AbortError' || controller.signal.aborted) throw codedError('aborted', 'The request was aborted while queued');
        if (/queue is at limit/i.test(e.message)) throw codedError('queue_full', 'The work queue is full');
        throw codedError('worker_failed', `Worker failed: ${e.message}`);
      } finally {
        running--;
        signal?.removeEventListener('abort', onAbort);
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await piscina.close();
    },
  };
}
