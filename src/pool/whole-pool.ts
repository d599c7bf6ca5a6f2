// The whole-removal pool (the CPU path): each worker owns a model session and runs removals start to
// finish, one at a time; our FIFO decides who runs next.
import { transferListOf } from '../image/owned-bytes.js';
import { DecodeMemory } from '../process/decode-memory.js';
import { photoThreadsNow } from './photo-threads.js';
import { codedError, FifoQueue, type RunEvents } from './fifo-queue.js';
import { startPiscina } from './start-piscina.js';
import { IdleRelease } from './idle-release.js';
import type { PoolInfo, PoolStats, RemovalPool, RunPriority } from './pool-api.js';
import type { RemoveResult, RemoveTask, WorkerConfig } from './protocol.js';

/** V8 young generation of a worker thread, MB. */
const WORKER_YOUNG_GENERATION_MB = 2;

export interface WholePoolConfig {
  info: PoolInfo;
  worker: WorkerConfig;
  workers: number;
  maxQueue: number;
  /** Low-priority tasks running or waiting at once (default: no cap). */
  lowPriorityPlaces?: number;
  /** The machine's cores, shared among the photos at work (src/pool/photo-threads.ts). */
  cores: number;
  /** What the decodes in flight may hold at once (default MAX_DECODE_BYTES_IN_FLIGHT; memory-fit.ts sizes it to a limit). */
  decodeCeilingBytes?: number;
}

/** A removal, or the idle `release` that hands a worker's memory back (src/pool/idle-release.ts). */
type Job = { name: 'remove'; task: RemoveTask } | { name: 'release' };

export async function createWholePool(cfg: WholePoolConfig): Promise<RemovalPool> {
  const { workers } = cfg;
  // One slot per worker: the FIFO runs at most `workers` tasks at once.
  const decodeMemory = DecodeMemory.create(workers, cfg.decodeCeilingBytes);
  const piscina = await startPiscina({
    filename: '../worker/worker.js',
    threads: workers,
    workerData: { ...cfg.worker, decodeMemory: decodeMemory.share },
    // The worker's JS allocates little (pixels live in external buffers): a small young generation
    // keeps its idle heap small (docs/memory.md).
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  let closed = false;

  // Our FIFO decides who runs next; Piscina gets a task only when a worker is free, and no signal
  // (aborting a running Piscina task would kill its worker and the model with it).
  const queue = new FifoQueue<Job, RemoveResult | undefined>(
    async (job, waitMs) => {
      if (job.name === 'release') {
        await piscina.run({}, { name: 'release' });
        return undefined;
      }
      const { task } = job;
      // Transferred when it can be (its own buffer, or a view on its request's body); otherwise cloned.
      const transferList = transferListOf(task.input);
      let result: RemoveResult;
      const decodeSlot = decodeMemory.claimSlot();
      try {
        // The photo passes take idle workers' cores too (the model keeps its own ORT threads).
        const threads = photoThreadsNow(cfg.cores, queue.stats().running, cfg.worker.photoThreads);
        const run: RemoveTask = { input: task.input, options: task.options, decodeSlot, threads };
        result = (await piscina.run(run, transferList.length > 0 ? { transferList } : {})) as RemoveResult;
      } catch (err) {
        throw codedError('worker_failed', `Worker failed: ${(err as Error).message}`);
      } finally {
        decodeMemory.returnSlot(decodeSlot);
      }
      if (result.ok) result.timings.queue = Math.round(waitMs * 10) / 10;
      return result;
    },
    { concurrency: workers, maxQueue: cfg.maxQueue, ...(cfg.lowPriorityPlaces !== undefined && { maxLow: cfg.lowPriorityPlaces }) },
  );

  // Removals in the pool (waiting or running); once none have been for a while, every worker hands its
  // memory back: one `release` each, at low priority (new removals go first; Piscina never queues).
  let inPool = 0;
  const idleRelease = new IdleRelease(() => {
    for (let i = 0; i < workers; i++) void queue.run({ name: 'release' }, undefined, undefined, 'low').catch(() => undefined);
  });

  return {
    info: cfg.info,
    get ready() {
      return !closed;
    },
    stats(): PoolStats {
      return { workers, ...queue.stats() };
    },
    async run(task: RemoveTask, signal?: AbortSignal, events?: RunEvents, priority: RunPriority = 'normal'): Promise<RemoveResult> {
      inPool++;
      idleRelease.busy();
      try {
        return (await queue.run({ name: 'remove', task }, signal, events, priority))!;
      } finally {
        if (--inPool === 0) idleRelease.idle();
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      idleRelease.close();
      await queue.close();
      // The block cache is the process's: handed back now, not left to whoever uses the addon next.
      await piscina.run({}, { name: 'release' }).catch(() => undefined);
      await piscina.close();
    },
  };
}
