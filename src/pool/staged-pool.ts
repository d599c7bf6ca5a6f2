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

/** The two Piscinas and the decode memory their photo workers share. */
interface StageWorkers {
  inferPiscina: Piscina;
  cpuPiscina: Piscina;
  decodeMemory: DecodeMemory;
}

/** Starts the inference workers first (they load the model and tune every batch size, the slow part), then the photo workers. */
async function startWorkers(cfg: StagedPoolConfig): Promise<StageWorkers> {
  const inferPiscina = await startPiscina({ filename: '../worker/infer-worker.js', threads: cfg.inferWorkers, workerData: cfg.infer });
  // One slot per photo worker: the CPU FIFO runs at most `cpuWorkers` stages at once.
  const decodeMemory = DecodeMemory.create(cfg.cpuWorkers);
  try {
    const cpuPiscina = await startPiscina({
      filename: '../worker/worker.js',
      threads: cfg.cpuWorkers,
      workerData: { ...cfg.worker, decodeMemory: decodeMemory.share },
    });
    return { inferPiscina, cpuPiscina, decodeMemory };
  } catch (err) {
    await inferPiscina.destroy();
    throw err;
  }
}

/** The photo workers' FIFO: each job holds a decode slot while it runs, and takes the idle workers' cores. */
function cpuStage(cfg: StagedPoolConfig, { cpuPiscina, decodeMemory }: StageWorkers): FifoQueue<CpuJob, unknown> {
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
    // Admission (StagedPool.run) bounds the pipeline; this queue never refuses what was admitted.
    { concurrency: cfg.cpuWorkers, maxQueue: Number.MAX_SAFE_INTEGER },
  );
  return cpu;
}

/**
 * The inference workers' FIFO: up to maxBatch model inputs in one run, into mask memory kept from
 * earlier batches where there is some. `companyExpected` says whether a batch may wait for more.
 */
function inferStage(cfg: StagedPoolConfig, inferPiscina: Piscina, spareMasks: SpareMasks, companyExpected: () => boolean): FifoQueue<Uint8Array, Mask> {
  return new FifoQueue<Uint8Array, Mask>(
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
    { concurrency: cfg.inferWorkers, maxQueue: Number.MAX_SAFE_INTEGER, maxBatch: cfg.maxBatch, maxWaitMs: cfg.maxWaitMs, companyExpected },
    'batched',
  );
}

/** A request in the pipeline; `stop` withdraws it while it has not started yet (close()). */
interface InFlightState {
  started: boolean;
  stop: AbortController;
}

class StagedPool implements RemovalPool {
  readonly info: PoolInfo;
  private readonly cpu: FifoQueue<CpuJob, unknown>;
  private readonly gpu: FifoQueue<Uint8Array, Mask>;
  /** Requests in their first stage (queued for it or running it): the batches' possible company. */
  private preparing = 0;
  private readonly spareMasks: SpareMasks;
  private readonly sparePhotos: SparePhotos;
  private readonly idleRelease: IdleRelease;
  /** What runs at once: a stage per photo worker and a full batch per inference worker. */
  private readonly capacity: number;
  private readonly lowPlaces: number;
  /** Low-priority requests in the pipeline: capped by lowPlaces, not counted against capacity + maxQueue. */
  private lowInFlight = 0;
  private closed = false;
  private readonly inFlight = new Map<Promise<unknown>, InFlightState>();

  constructor(
    private readonly cfg: StagedPoolConfig,
    private readonly workers: StageWorkers,
  ) {
    this.info = cfg.info;
    this.cpu = cpuStage(cfg, workers);
    // Kept between requests while busy; none where memory goes back after every task.
    const keeps = cfg.worker.memoryRelease !== 'every-task';
    this.spareMasks = new SpareMasks(keeps ? cfg.inferWorkers * cfg.maxBatch : 0);
    // One photo's memory per photo worker: what stays between a finish and the next prepare.
    this.sparePhotos = new SparePhotos(keeps ? cfg.cpuWorkers : 0);
    // Company for a batch can only come from a photo being prepared now: with none, a lone photo
    // (concurrency 1, light load) goes at once instead of waiting maxWaitMs for nobody.
    this.gpu = inferStage(cfg, workers.inferPiscina, this.spareMasks, () => this.preparing > 0);
    this.idleRelease = new IdleRelease(() => this.releaseIdle());
    this.capacity = cfg.cpuWorkers + cfg.inferWorkers * cfg.maxBatch;
    this.lowPlaces = cfg.lowPriorityPlaces ?? Number.POSITIVE_INFINITY;
  }

  get ready(): boolean {
    return !this.closed;
  }

  stats(): PoolStats {
    const c = this.cpu.stats();
    const g = this.gpu.stats();
    return {
      workers: this.cfg.cpuWorkers,
      running: c.running + g.running,
      queued: Math.max(0, this.inFlight.size - c.running - g.running),
      longestWaitMs: Math.max(c.longestWaitMs, g.longestWaitMs),
      started: g.started,
      batches: g.batches,
      dropped: c.dropped + g.dropped,
    };
  }

  /** Admission: bounds the whole pipeline (capacity + maxQueue), low-priority work by its own places. */
  async run(task: RemoveTask, signal?: AbortSignal, events?: RunEvents, priority: RunPriority = 'normal'): Promise<RemoveResult> {
    if (this.closed) throw codedError('pool_closed', 'The worker pool is closed');
    if (signal?.aborted) throw codedError('aborted', 'The request was aborted before it started');
    const low = priority === 'low';
    if (low && this.lowInFlight >= this.lowPlaces) throw codedError('share_full', 'Low-priority work holds its whole share of the pool');
    if (!low && this.inFlight.size - this.lowInFlight >= this.capacity + this.cfg.maxQueue) throw codedError('queue_full', 'The work queue is full');
    const state: InFlightState = { started: false, stop: new AbortController() };
    const combined = signal ? AbortSignal.any([signal, state.stop.signal]) : state.stop.signal;
    const work = this.runStages(task, combined, events, state, priority);
    this.inFlight.set(work, state);
    this.idleRelease.busy();
    if (low) this.lowInFlight++;
    try {
      return await work;
    } catch (err) {
      // Withdrawn by close() before it started: say so, as the CPU path does.
      if (state.stop.signal.aborted && !signal?.aborted) throw codedError('pool_closed', 'The worker pool closed before the task started');
      throw err;
    } finally {
      this.inFlight.delete(work);
      if (low) this.lowInFlight--;
      if (this.inFlight.size === 0) this.idleRelease.idle();
    }
  }

  /** Stop taking work; requests not started yet are refused ('pool_closed'), started ones finish every stage. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const state of this.inFlight.values()) if (!state.started) state.stop.abort();
    await Promise.allSettled([...this.inFlight.keys()]);
    await Promise.all([this.cpu.close(), this.gpu.close()]);
    this.idleRelease.close();
    const { cpuPiscina, inferPiscina } = this.workers;
    // The block cache is the process's: handed back now, not left to whoever uses the addon next.
    await cpuPiscina.run({}, { name: 'release' }).catch(() => undefined);
    await Promise.all([cpuPiscina.close(), inferPiscina.close()]);
  }

  /** prepare → infer (in a batch) → finish; `state.started` once the first stage starts. */
  private async runStages(
    task: RemoveTask,
    signal: AbortSignal,
    events: RunEvents | undefined,
    state: { started: boolean },
    priority: RunPriority,
  ): Promise<RemoveResult> {
    const wait = { ms: 0 };
    const prepared = await this.prepare(task, signal, priority, (waitMs) => {
      state.started = true;
      wait.ms += waitMs;
      events?.onStart?.(waitMs);
    });
    if (!prepared.ok) return prepared;
    if (prepared.unusedMemory) this.sparePhotos.put(prepared.unusedMemory);
    // The worker moved these back: this thread alone holds them, so they go on to the last stage by transfer too.
    claimExclusive(prepared.input.buffer);
    if (prepared.photo) claimExclusive(prepared.photo.buffer);
    const queued = performance.now();
    const inferred = await this.gpu.run(prepared.modelInput, signal);
    const inferWait = performance.now() - queued - inferred.ms;
    wait.ms += inferWait;
    const timings: Record<string, number> = { ...prepared.timings, batchWait: round(inferWait), infer: inferred.ms, batch: inferred.batch };
    timings.total = round((timings.total ?? 0) + inferred.ms);
    const result = await this.finish(task, prepared, inferred, timings, signal, (w) => (wait.ms += w));
    if (result.ok) result.timings.queue = round(wait.ms);
    return result;
  }

  /** Stage 1 on a photo worker, in priority order (only the entry is ordered by priority: later stages go in turn). */
  private async prepare(task: RemoveTask, signal: AbortSignal, priority: RunPriority, onStart: (waitMs: number) => void): Promise<PrepareResult> {
    this.preparing++;
    const photoMemory = this.sparePhotos.take();
    try {
      const prepareTask: RemoveTask = photoMemory ? { ...task, photoMemory } : task;
      const transfer = [...transferListOf(task.input), ...(photoMemory ? [photoMemory] : [])];
      return (await this.cpu.run({ name: 'prepare', task: prepareTask, transfer }, signal, { onStart }, priority)) as PrepareResult;
    } finally {
      this.preparing--;
    }
  }

  /** Stage 3 on a photo worker, ahead of new work; the mask and photo memory it hands back are kept for the next requests. */
  private async finish(
    task: RemoveTask,
    prepared: Extract<PrepareResult, { ok: true }>,
    inferred: Mask,
    timings: Record<string, number>,
    signal: AbortSignal,
    onStart: (waitMs: number) => void,
  ): Promise<RemoveResult> {
    const finishTask: FinishTask = {
      input: prepared.input,
      options: task.options,
      plan: prepared.plan,
      mask: inferred.mask,
      timings,
      ...(prepared.photo ? { photo: prepared.photo } : {}),
    };
    const transfer = [...transferListOf(prepared.input), inferred.mask.buffer as ArrayBuffer, ...(prepared.photo ? transferListOf(prepared.photo) : [])];
    const { result, spareMask, sparePhoto } = (await this.cpu.run(
      { name: 'finish', task: finishTask, transfer },
      signal,
      { onStart },
      'urgent',
    )) as FinishReply;
    if (spareMask) this.spareMasks.put(spareMask);
    if (sparePhoto) this.sparePhotos.put(sparePhoto);
    return result;
  }

  /**
   * Nothing in the pipeline for a while: every photo worker collects what it put off
   * (release-policy.ts) and hands its memory back, the addon's block cache (the composites' scratch and
   * the inference workers' tensors, process-wide) with it: one `release` per worker, through the FIFO at
   * low priority (new requests go first and Piscina still never queues).
   */
  private releaseIdle(): void {
    const drop = [...this.spareMasks.drain(), ...this.sparePhotos.drain()];
    for (let i = 0; i < this.cfg.cpuWorkers; i++) {
      const task = i === 0 && drop.length ? { drop } : {};
      void this.cpu.run({ name: 'release', task, transfer: i === 0 ? drop : [] }, undefined, undefined, 'low').catch(() => undefined);
    }
  }
}

export async function createStagedPool(cfg: StagedPoolConfig): Promise<RemovalPool> {
  return new StagedPool(cfg, await startWorkers(cfg));
}
