// The Piscina pool that runs removals: sizing, readiness, queue tracking, abort and error mapping.
import os from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import { chooseDevice, parseDevice, probeCuda, type DeviceChoice } from '../device/device.js';
import { ADDON_PATH } from '../native/binding.js';
import { modelEntry, sessionOptionsFor } from '../model/manifest.js';
import { verifyModelFile } from '../model/assemble.js';
import { ownsBuffer } from '../image/owned-bytes.js';
import { codedError, FifoQueue, type RunEvents } from './fifo-queue.js';
import type { PoolOptions, PoolStats, RemovalPool } from './pool-api.js';
import type { RemoveResult, RemoveTask } from './task.js';
import type { WorkerConfig } from '../worker/worker.js';

export type { PoolOptions, PoolStats, RemovalPool } from './pool-api.js';

/** Waiting removals per pool before 503: about a minute of work on one worker. */
export const DEFAULT_MAX_QUEUE = 64;

/** V8 young generation of a worker thread, MB. */
const WORKER_YOUNG_GENERATION_MB = 2;

export function defaultSizing(cores = os.availableParallelism()): { workers: number; threadsPerWorker: number } {
  const workers = Math.max(1, Math.floor(cores / 2));
  return { workers, threadsPerWorker: Math.max(1, Math.floor(cores / workers)) };
}

export async function createRemovalPool(opts: PoolOptions = {}): Promise<RemovalPool> {
  const sizing = defaultSizing();
  const workers = opts.workers ?? sizing.workers;
  const threads = opts.threadsPerWorker ?? Math.max(1, Math.floor(os.availableParallelism() / workers));
  const model = modelEntry(opts.model);
  const modelPath = opts.modelPath ?? model.path;
  if (!opts.modelPath && model.entry.sha256) verifyModelFile(modelPath, model.entry.sha256);

  const device: DeviceChoice = chooseDevice(
    typeof opts.device === 'object' ? opts.device : parseDevice(opts.device),
    probeCuda({ libDir: path.dirname(ADDON_PATH) }),
  );
  const config: WorkerConfig = { modelPath, ...sessionOptionsFor(model.entry, threads), device: device.kind, deviceId: device.index };
  const piscina = new Piscina({
    filename: new URL('../worker/worker.js', import.meta.url).href,
    minThreads: workers,
    maxThreads: workers,
    // Workers hold the model session: never let them idle out.
    idleTimeout: Number.MAX_SAFE_INTEGER,
    concurrentTasksPerWorker: 1,
    workerData: config,
    // libuv's pool is process-wide and shared by every worker's sharp calls.
    env: process.env,
    // The worker's JS allocates little (pixels live in external buffers): a small young generation
    // keeps its idle heap small (docs/memory.md).
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });

  let ready = false;
  let closed = false;
  // One ping per worker: each worker takes one task at a time, so N concurrent pings resolve
  // only once N workers have finished loading the model.
  try {
    await Promise.all(Array.from({ length: workers }, () => piscina.run(null, { name: 'ping' })));
  } catch (err) {
    await piscina.destroy();
    throw codedError('ERR_CUTOUT_POOL_START', `Worker pool failed to start: ${(err as Error).message}`);
  }
  ready = true;

  // Our FIFO decides who runs next; Piscina gets a task only when a worker is free, and no signal
  // (aborting a running Piscina task would kill its worker and the model with it).
  const queue = new FifoQueue<RemoveTask, RemoveResult>(async (task, waitMs) => {
    // Transfer the input when it owns its whole ArrayBuffer; otherwise it is cloned.
    const buf = task.input.buffer;
    const transferable = buf.byteLength > 0 && ownsBuffer(task.input);
    let result: RemoveResult;
    try {
      result = (await piscina.run({ input: task.input, options: task.options }, transferable ? { transferList: [buf as ArrayBuffer] } : {})) as RemoveResult;
    } catch (err) {
      throw codedError('worker_failed', `Worker failed: ${(err as Error).message}`);
    }
    if (result.ok) result.timings.queue = Math.round(waitMs * 10) / 10;
    return result;
  }, { concurrency: workers, maxQueue: opts.maxQueue ?? DEFAULT_MAX_QUEUE });

  return {
    info: { device, model: opts.modelPath ? path.basename(opts.modelPath) : model.name, workers, threadsPerWorker: threads },
    get ready() {
      return ready && !closed;
    },
    stats(): PoolStats {
      return { workers, ...queue.stats() };
    },
    run(task: RemoveTask, signal?: AbortSignal, events?: RunEvents): Promise<RemoveResult> {
      return queue.run(task, signal, events);
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await queue.close();
      await piscina.close();
    },
  };
}
