// The staged pool (the GPU path): photo work on many CPU workers, inference in batches across
// requests on one or two inference workers that share one model session.
//
//   request → CPU FIFO: prepare (probe, decode to 1024² RGB)    ─┐
//           → batch FIFO: up to maxBatch photos, waiting at most │ each stage takes and hands back
//             maxWaitMs for the batch to fill → one model run    │ its buffers by transfer: no copies
//           → CPU FIFO, ahead of new work: finish (decode at     │ between threads
//             output size, mask into alpha, layout, encode)     ─┘
//
// Every stage is a FifoQueue (strict order, aborts drop waiting work); admission bounds the whole
// pipeline, so `maxQueue` means what it means on the CPU path: requests waiting beyond what runs.
// A photo that fails to decode fails in prepare and never reaches a batch; a batch that fails as a
// whole is run again photo by photo, so no request fails for another (fifo-queue.ts).
import type { Piscina } from 'piscina';
import { claimExclusive, transferListOf } from '../image/owned-bytes.js';
import { DecodeMemory } from '../process/decode-memory.js';
import { photoThreadsNow } from './photo-threads.js';
import { codedError, FifoQueue, type RunEvents } from './fifo-queue.js';
import { startPiscina } from './start-piscina.js';
import { IdleRelease } from './idle-release.js';
import type { BatchReport, PoolInfo, PoolStats, RemovalPool, RunPriority } from './pool-api.js';
import { SpareMasks } from './spare-masks.js';
import { SparePhotos } from './spare-photos.js';
import type { FinishReply, FinishTask, InferBatchResult, InferWorkerConfig, PrepareResult, RemoveResult, RemoveTask, WorkerConfig } from './protocol.js';

export interface StagedPoolConfig {
  info: PoolInfo;
  /** CPU workers' configuration (mode 'stages'). */
  worker: WorkerConfig;
  cpuWorkers: number;
  infer: InferWorkerConfig;
  inferWorkers: number;
  maxBatch: number;
  maxWaitMs: number;
  maxQueue: number;
  /** Low-priority requests in the pipeline at once (default: no cap). */
  lowPriorityPlaces?: number;
  /** Called once every inference batch has run, or failed (metrics). */
  onBatch?: (batch: BatchReport) => void;
  /** The machine's cores, shared among the photos at work (src/pool/photo-threads.ts). */
  cores: number;
}

interface CpuJob {
  /** A worker function of src/worker/worker.ts; `release` reads no task (its `drop`: spare masks and photo memory, transferred for its GC to free). */
  name: 'prepare' | 'finish' | 'release';
  task: RemoveTask | FinishTask | { drop?: ArrayBuffer[] };
  transfer: ArrayBuffer[];
}

interface Mask {
  mask: Float32Array;
  ms: number;
  batch: number;
}

const round = (ms: number): number => Math.round(ms * 10) / 10;

export async function createStagedPool(cfg: StagedPoolConfig): Promise<RemovalPool> {
  // The inference workers first: they load the model and tune every batch size, the slow part.
  const inferPiscina = await startPiscina({ filename: '../worker/infer-worker.js', threads: cfg.inferWorkers, workerData: cfg.infer });
  let cpuPiscina: Piscina;
  // One slot per photo worker: the CPU FIFO runs at most `cpuWorkers` stages at once.
  const decodeMemory = DecodeMemory.create(cfg.cpuWorkers);
  try {
    cpuPiscina = await startPiscina({ filename: '../worker/worker.js', threads: cfg.cpuWorkers, workerData: { ...cfg.worker, decodeMemory: decodeMemory.share } });
  } catch (err) {
    await inferPiscina.destroy();
    throw err;
  }

  const cpu: FifoQueue<CpuJob, unknown> = new FifoQueue<CpuJob, unknown>(
    async (job) => {
      const decodeSlot = decodeMemory.claimSlot();
      // A photo alone takes the idle photo workers' cores for its passes.
      const threads = photoThreadsNow(cfg.cores, cpu.stats().running, cfg.worker.photoThreads);
      try {
        return await cpuPiscina.run({ ...job.task, decodeSlot, threads }, { name: job.name, transferList: job.transfer });
      } catch (err) {
        throw codedError('worker_failed', `Worker failed: ${(err as Error).message}`);
      } finally {
        decodeMemory.returnSlot(decodeSlot);
      }
    },
    // Admission below bounds the pipeline; this queue never refuses what was admitted.
    { concurrency: cfg.cpuWorkers, maxQueue: Number.MAX_SAFE_INTEGER },
  );
  /** Requests in their first stage (queued for it or running it): the batches' possible company. */
  let preparing = 0;
  // Kept between requests while busy; none where memory goes back after every task.
  const keeps = cfg.worker.memoryRelease !== 'every-task';
  const spareMasks = new SpareMasks(keeps ? cfg.inferWorkers * cfg.maxBatch : 0);
  // One photo's memory per photo worker: what stays between a finish and the next prepare.
  const sparePhotos = new SparePhotos(keeps ? cfg.cpuWorkers : 0);
  const gpu = new FifoQueue<Uint8Array, Mask>(
    async (images) => {
      let out: InferBatchResult;
      const outputs = spareMasks.take(images.length);
      try {
        const transferList = [...images.map((i) => i.buffer as ArrayBuffer), ...outputs.map((o) => o.buffer as ArrayBuffer)];
        out = (await inferPiscina.run(outputs.length ? { images, outputs } : { images }, { transferList })) as InferBatchResult;
      } catch (err) {
        cfg.onBatch?.({ size: images.length });
        throw codedError('worker_failed', `Inference failed: ${(err as Error).message}`);
      }
      cfg.onBatch?.({ size: images.length, bucket: out.batch, ms: out.ms, reused: out.reused });
      if (out.masks[0]) spareMasks.sizeFrom(out.masks[0]);
      return out.masks.map((mask) => ({ status: 'fulfilled', value: { mask, ms: out.ms, batch: out.batch } }));
    },
    // Company for a batch can only come from a photo being prepared now: with none, a lone photo
    // (concurrency 1, light load) goes at once instead of waiting maxWaitMs for nobody.
    { concurrency: cfg.inferWorkers, maxQueue: Number.MAX_SAFE_INTEGER, maxBatch: cfg.maxBatch, maxWaitMs: cfg.maxWaitMs, companyExpected: () => preparing > 0 },
    'batched',
  );

  // Nothing in the pipeline for a while: every photo worker collects what it put off
  // (release-policy.ts) and hands its memory back, the addon's block cache (the composites' scratch and
  // the inference workers' tensors, process-wide) with it: one `release` per worker, through the FIFO at
  // low priority (new requests go first and Piscina still never queues).
  const idleRelease = new IdleRelease(() => {
    const drop = [...spareMasks.drain(), ...sparePhotos.drain()];
    for (let i = 0; i < cfg.cpuWorkers; i++) {
      const task = i === 0 && drop.length ? { drop } : {};
      void cpu.run({ name: 'release', task, transfer: i === 0 ? drop : [] }, undefined, undefined, 'low').catch(() => undefined);
    }
  });

  const capacity = cfg.cpuWorkers + cfg.inferWorkers * cfg.maxBatch;
  const lowPlaces = cfg.lowPriorityPlaces ?? Number.POSITIVE_INFINITY;
  /** Low-priority requests in the pipeline: capped by lowPlaces, not counted against capacity + maxQueue. */
  let lowInFlight = 0;
  let closed = false;
  // Requests in the pipeline; `stop` withdraws one that has not started yet (close()).
  const inFlight = new Map<Promise<unknown>, { started: boolean; stop: AbortController }>();

  async function run(task: RemoveTask, signal: AbortSignal, events: RunEvents | undefined, state: { started: boolean }, priority: RunPriority): Promise<RemoveResult> {
    let waited = 0;
    // Only the entry is ordered by priority: once prepared, a request's later stages go in turn.
    preparing++;
    let prepared: PrepareResult;
    const photoMemory = sparePhotos.take();
    try {
      const prepareTask: RemoveTask = photoMemory ? { ...task, photoMemory } : task;
      const transfer = [...transferListOf(task.input), ...(photoMemory ? [photoMemory] : [])];
      prepared = (await cpu.run({ name: 'prepare', task: prepareTask, transfer }, signal, {
        onStart(waitMs) {
          state.started = true;
          waited += waitMs;
          events?.onStart?.(waitMs);
        },
      }, priority)) as PrepareResult;
    } finally {
      preparing--;
    }
    if (!prepared.ok) return prepared;
    if (prepared.unusedMemory) sparePhotos.put(prepared.unusedMemory);
    // The worker moved these back: this thread alone holds them, so they go on to the last stage by transfer too.
    claimExclusive(prepared.input.buffer);
    if (prepared.photo) claimExclusive(prepared.photo.buffer);
    const queued = performance.now();
    const inferred = await gpu.run(prepared.modelInput, signal);
    const inferWait = performance.now() - queued - inferred.ms;
    waited += inferWait;
    const timings: Record<string, number> = { ...prepared.timings, batchWait: round(inferWait), infer: inferred.ms, batch: inferred.batch };
    timings.total = round((timings.total ?? 0) + inferred.ms);
    const finishTask: FinishTask = { input: prepared.input, options: task.options, plan: prepared.plan, mask: inferred.mask, timings, ...(prepared.photo ? { photo: prepared.photo } : {}) };
    const transfer = [...transferListOf(prepared.input), inferred.mask.buffer as ArrayBuffer, ...(prepared.photo ? transferListOf(prepared.photo) : [])];
    const { result, spareMask, sparePhoto } = (await cpu.run({ name: 'finish', task: finishTask, transfer }, signal, { onStart: (w) => (waited += w) }, 'urgent')) as FinishReply;
    if (spareMask) spareMasks.put(spareMask);
    if (sparePhoto) sparePhotos.put(sparePhoto);
    if (result.ok) result.timings.queue = round(waited);
    return result;
  }

  return {
    info: cfg.info,
    get ready() {
      return !closed;
    },
    stats(): PoolStats {
      const c = cpu.stats();
      const g = gpu.stats();
      return {
        workers: cfg.cpuWorkers,
        running: c.running + g.running,
        queued: Math.max(0, inFlight.size - c.running - g.running),
        longestWaitMs: Math.max(c.longestWaitMs, g.longestWaitMs),
        started: g.started,
        batches: g.batches,
        dropped: c.dropped + g.dropped,
      };
    },
    async run(task: RemoveTask, signal?: AbortSignal, events?: RunEvents, priority: RunPriority = 'normal'): Promise<RemoveResult> {
      if (closed) throw codedError('pool_closed', 'The worker pool is closed');
      if (signal?.aborted) throw codedError('aborted', 'The request was aborted before it started');
      const low = priority === 'low';
      if (low && lowInFlight >= lowPlaces) throw codedError('share_full', 'Low-priority work holds its whole share of the pool');
      if (!low && inFlight.size - lowInFlight >= capacity + cfg.maxQueue) throw codedError('queue_full', 'The work queue is full');
      const state = { started: false, stop: new AbortController() };
      const combined = signal ? AbortSignal.any([signal, state.stop.signal]) : state.stop.signal;
      const work = run(task, combined, events, state, priority);
      inFlight.set(work, state);
      idleRelease.busy();
      if (low) lowInFlight++;
      try {
        return await work;
      } catch (err) {
        // Withdrawn by close() before it started: say so, as the CPU path does.
        if (state.stop.signal.aborted && !signal?.aborted) throw codedError('pool_closed', 'The worker pool closed before the task started');
        throw err;
      } finally {
        inFlight.delete(work);
        if (low) lowInFlight--;
        if (inFlight.size === 0) idleRelease.idle();
      }
    },
    /** Stop taking work; requests not started yet are refused ('pool_closed'), started ones finish every stage. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const state of inFlight.values()) if (!state.started) state.stop.abort();
      await Promise.allSettled([...inFlight.keys()]);
      await Promise.all([cpu.close(), gpu.close()]);
      idleRelease.close();
      // The block cache is the process's: handed back now, not left to whoever uses the addon next.
      await cpuPiscina.run({}, { name: 'release' }).catch(() => undefined);
      await Promise.all([cpuPiscina.close(), inferPiscina.close()]);
    },
  };
}
