// The one queue in front of the workers: strict FIFO, bounded, abort-aware, and optionally batching.
// Three classes, each strictly FIFO: urgent (work already admitted) ahead of normal ahead of low
// (the sandbox's), and low tasks hold at most `maxLow` places, running or waiting.
// Piscina's own queue is not a FIFO under load (a task with an AbortSignal waits in a skip queue
// and the second-oldest one is pushed back to the tail on every completion: piscina#1031), so tasks
// wait here and are handed over only when a worker slot is free, without a signal. Piscina then
// never queues anything.
//
// Batching (for a GPU session): a free slot takes up to `maxBatch` waiting tasks, in arrival order,
// and waits at most `maxWaitMs` after the oldest one arrived for the batch to fill, unless
// `companyExpected` says nothing more is coming. With the defaults (1, 0 ms) it is a plain FIFO of
// single tasks.

export interface FifoQueueOptions {
  /** Batches (or single tasks) running at once: the pool's workers. */
  concurrency: number;
  /** Tasks waiting beyond the running ones before run() rejects with code 'queue_full'. */
  maxQueue: number;
  /** Most tasks handed to one executor call (default 1). */
  maxBatch?: number;
  /** How long the oldest waiting task may wait for a fuller batch while a slot is free (default 0). */
  maxWaitMs?: number;
  /**
   * Whether more tasks are on their way (default: always). When it says no, a batch that is not full
   * leaves at once instead of waiting maxWaitMs for company that cannot come in time (the staged
   * pool: no photo being prepared). Asked each time the queue decides whether to wait.
   */
  companyExpected?: () => boolean;
  /**
   * Low-priority tasks running or waiting at once before run() rejects one with code 'share_full'
   * (default: no cap). They are not counted against `maxQueue`, and every normal task goes ahead of
   * them, so low work delays normal work by at most the low tasks already running.
   */
  maxLow?: number;
}

export interface FifoQueueStats {
  /** Tasks running (in all running batches). */
  running: number;
  queued: number;
  /** Longest time a task waited before it started, since the queue was made (ms). */
  longestWaitMs: number;
  started: number;
  /** Executor calls (batches) started. */
  batches: number;
  /** Tasks whose caller left (abort/deadline) while they waited: dropped, never run. */
  dropped: number;
}

/** Runs one task; `waitMs` is how long it waited in the queue. */
export type Executor<T, R> = (task: T, waitMs: number) => Promise<R>;

/**
 * Runs a batch and settles each task on its own: one bad input fails only its own entry. When the
 * whole call rejects, each task of the batch is run again alone, so no task fails for another.
 */
export type BatchExecutor<T, R> = (tasks: readonly T[], waitsMs: readonly number[]) => Promise<ReadonlyArray<PromiseSettledResult<R>>>;

export interface RunEvents {
  /** The task left the queue and started. */
  onStart?(waitMs: number): void;
}

/**
 * 'urgent': the second half of work already admitted (the staged path's finish stage): it waits
 * ahead of every normal task (in arrival order among urgent ones) and is never refused for a full
 * queue, so requests in progress finish before new ones start and their memory goes back first.
 * 'low': work that must never delay the rest (the sandbox): it waits behind every normal task and
 * is capped by `maxLow` instead of `maxQueue`.
 */
export type Priority = 'normal' | 'urgent' | 'low';

interface Entry<T, R> {
  task: T;
  enqueuedAt: number;
  resolve(value: R): void;
  reject(err: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  events: RunEvents | undefined;
  /** The caller stopped waiting (abort while running): its result goes nowhere. */
  gone: boolean;
  /** Run alone: its batch failed as a whole. */
  solo: boolean;
  urgent: boolean;
  low: boolean;
}

export function codedError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

export class FifoQueue<T, R> {
  private waiting: Array<Entry<T, R>> = [];
  private runningTasks = 0;
  private runningBatches = 0;
  /** Low-priority tasks waiting / running (kept as counts: the bound is checked on every run). */
  private lowWaiting = 0;
  private lowRunning = 0;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private idleWaiters: Array<() => void> = [];
  private readonly counters = { longestWaitMs: 0, started: 0, batches: 0, dropped: 0 };
  private readonly exec: BatchExecutor<T, R>;
  private readonly maxBatch: number;
  private readonly maxWaitMs: number;
  private readonly maxLow: number;

  /** A FIFO of single tasks. */
  constructor(exec: Executor<T, R>, opts: FifoQueueOptions & { maxBatch?: 1 });
  /** A batching FIFO. */
  constructor(exec: BatchExecutor<T, R>, opts: FifoQueueOptions, batched: 'batched');
  constructor(
    exec: Executor<T, R> | BatchExecutor<T, R>,
    private readonly opts: FifoQueueOptions,
    batched?: 'batched',
  ) {
    if (!(opts.concurrency >= 1)) throw new RangeError(`Expected concurrency >= 1 but received ${opts.concurrency}`);
    if (!(opts.maxQueue >= 0)) throw new RangeError(`Expected maxQueue >= 0 but received ${opts.maxQueue}`);
    this.maxBatch = opts.maxBatch ?? 1;
    this.maxWaitMs = opts.maxWaitMs ?? 0;
    this.maxLow = opts.maxLow ?? Number.POSITIVE_INFINITY;
    if (!(this.maxLow >= 0)) throw new RangeError(`Expected maxLow >= 0 but received ${opts.maxLow}`);
    if (!(Number.isInteger(this.maxBatch) && this.maxBatch >= 1)) throw new RangeError(`Expected an integer maxBatch >= 1 but received ${opts.maxBatch}`);
    if (!(this.maxWaitMs >= 0 && Number.isFinite(this.maxWaitMs))) throw new RangeError(`Expected maxWaitMs >= 0 but received ${opts.maxWaitMs}`);
    if (batched) {
      this.exec = exec as BatchExecutor<T, R>;
    } else {
      if (this.maxBatch !== 1) throw new RangeError('A single-task executor takes maxBatch 1; pass "batched" for batches');
      const single = exec as Executor<T, R>;
      this.exec = async (tasks, waits) => [
        await single(tasks[0]!, waits[0]!).then(
          (value): PromiseSettledResult<R> => ({ status: 'fulfilled', value }),
          (reason: unknown): PromiseSettledResult<R> => ({ status: 'rejected', reason }),
        ),
      ];
    }
  }

  /**
   * Run `task` once a slot is free, in arrival order within its priority. Rejects with `.code`:
   * 'queue_full' (no room), 'share_full' (a low task beyond `maxLow`), 'aborted' (the signal fired: a waiting task is dropped and never runs;
   * a running one finishes in the background and its result is thrown away), 'pool_closed'.
   */
  run(task: T, signal?: AbortSignal, events?: RunEvents, priority: Priority = 'normal'): Promise<R> {
    if (this.closed) return Promise.reject(codedError('pool_closed', 'The worker pool is closed'));
    if (signal?.aborted) return Promise.reject(codedError('aborted', 'The request was aborted before it started'));
    const urgent = priority === 'urgent';
    const low = priority === 'low';
    if (low && this.lowWaiting + this.lowRunning >= this.maxLow) {
      return Promise.reject(codedError('share_full', 'Low-priority work holds its whole share of the queue'));
    }
    if (priority === 'normal' && this.waiting.length - this.lowWaiting >= this.opts.maxQueue && !this.startsNow()) {
      return Promise.reject(codedError('queue_full', 'The work queue is full'));
    }
    return new Promise<R>((resolve, reject) => {
      const entry: Entry<T, R> = {
        task,
        enqueuedAt: performance.now(),
        resolve,
        reject,
        signal,
        events,
        gone: false,
        solo: false,
        urgent,
        low,
        onAbort: () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) {
            this.waiting.splice(i, 1); // bounded by maxQueue (+ maxLow): cheap
            if (entry.low) this.lowWaiting--;
            this.counters.dropped++;
            reject(codedError('aborted', 'The request was aborted while queued'));
            if (this.waiting.length === 0) this.clearTimer();
            this.notifyIdle();
          } else {
            entry.gone = true; // running: answer the caller now, drop the result later
            reject(codedError('aborted', 'The request was aborted while its task ran'));
          }
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      if (urgent) {
        let i = 0;
        while (i < this.waiting.length && this.waiting[i]!.urgent) i++;
        this.waiting.splice(i, 0, entry);
      } else if (low) {
        this.lowWaiting++;
        this.waiting.push(entry);
      } else {
        // Ahead of the waiting low tasks, which sit at the tail (at most maxLow of them to step over).
        let i = this.waiting.length;
        while (i > 0 && this.waiting[i - 1]!.low) i--;
        this.waiting.splice(i, 0, entry);
      }
      this.pump();
    });
  }

  stats(): FifoQueueStats {
    return { running: this.runningTasks, queued: this.waiting.length, ...this.counters };
  }

  /** Resolves once nothing runs or waits (tasks whose callers left included). */
  whenIdle(): Promise<void> {
    return this.runningBatches === 0 && this.waiting.length === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stop taking tasks; waiting ones are rejected with 'pool_closed'. Resolves once nothing runs. */
  close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    const waiting = this.waiting;
    this.waiting = [];
    this.lowWaiting = 0;
    for (const e of waiting) {
      e.signal?.removeEventListener('abort', e.onAbort);
      e.reject(codedError('pool_closed', 'The worker pool closed before the task started'));
    }
    return this.whenIdle();
  }

  /** A task arriving now would start at once (no wait, a free slot, no batch to fill). */
  private startsNow(): boolean {
    return this.waiting.length === 0 && this.runningBatches < this.opts.concurrency && this.maxWaitMs === 0;
  }

  private pump(): void {
    while (this.runningBatches < this.opts.concurrency && this.waiting.length > 0) {
      const oldest = this.waiting[0]!;
      const waited = performance.now() - oldest.enqueuedAt;
      const full = this.waiting.length >= this.maxBatch;
      if (!full && !oldest.solo && waited < this.maxWaitMs && !this.closed && (this.opts.companyExpected?.() ?? true)) {
        // Give the batch until the oldest task's wait runs out to fill up.
        if (!this.timer)
          this.timer = setTimeout(() => {
            this.timer = undefined;
            this.pump();
          }, this.maxWaitMs - waited);
        return;
      }
      this.clearTimer();
      const take = oldest.solo ? 1 : Math.min(this.maxBatch, this.waiting.length);
      this.startBatch(this.waiting.splice(0, take));
    }
  }

  private startBatch(batch: Array<Entry<T, R>>): void {
    const now = performance.now();
    const waits = batch.map((e) => now - e.enqueuedAt);
    this.runningBatches++;
    this.runningTasks += batch.length;
    this.counters.batches++;
    this.counters.started += batch.length;
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i]!;
      if (e.low) {
        this.lowWaiting--;
        this.lowRunning++;
      }
      if (waits[i]! > this.counters.longestWaitMs) this.counters.longestWaitMs = waits[i]!;
      try {
        e.events?.onStart?.(waits[i]!);
      } catch {
        // an observer's failure is not the task's
      }
    }
    let work: Promise<ReadonlyArray<PromiseSettledResult<R>>>;
    try {
      work = this.exec(
        batch.map((e) => e.task),
        waits,
      );
    } catch (err) {
      work = Promise.reject(err);
    }
    // The slot stays taken until the work itself settles, whoever stopped waiting for it.
    work
      .then(
        (results) => {
          this.endBatch(batch);
          batch.forEach((e, i) => {
            const r = results[i] ?? { status: 'rejected', reason: new Error('the executor returned no result for this task') };
            this.settle(e, r);
          });
        },
        (reason: unknown) => {
          this.endBatch(batch);
          if (batch.length === 1) {
            this.settle(batch[0]!, { status: 'rejected', reason });
            return;
          }
          // The batch failed as a whole: run each live task again alone, ahead of newer arrivals.
          const retry = batch.filter((e) => !e.gone);
          for (const e of retry) {
            e.solo = true;
            if (e.low) this.lowWaiting++;
          }
          this.waiting.unshift(...retry);
        },
      )
      .finally(() => {
        this.pump();
        this.notifyIdle();
      });
  }

  private endBatch(batch: Array<Entry<T, R>>): void {
    this.runningBatches--;
    this.runningTasks -= batch.length;
    for (const e of batch) if (e.low) this.lowRunning--;
  }

  private settle(e: Entry<T, R>, r: PromiseSettledResult<R>): void {
    e.signal?.removeEventListener('abort', e.onAbort);
    if (e.gone) return;
    if (r.status === 'fulfilled') e.resolve(r.value);
    else e.reject(r.reason);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private notifyIdle(): void {
    if (this.runningBatches !== 0 || this.waiting.length !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
