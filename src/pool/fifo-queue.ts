// The one queue in front of the workers: strict FIFO, bounded, abort-aware.
// Piscina's own queue is not a FIFO under load (a task with an AbortSignal waits in a skip queue
// and the second-oldest one is pushed back to the tail on every completion: piscina#1031), so tasks
// wait here and are handed over only when a worker slot is free, without a signal. Piscina then
// never queues anything.

export interface FifoQueueOptions {
  /** Tasks running at once (the pool's workers). */
  concurrency: number;
  /** Tasks waiting beyond the running ones before run() rejects with code 'queue_full'. */
  maxQueue: number;
}

export interface FifoQueueStats {
  running: number;
  queued: number;
  /** Longest time a task waited before it started, since the queue was made (ms). */
  longestWaitMs: number;
  started: number;
  /** Tasks whose caller left (abort/deadline) while they waited: dropped, never run. */
  dropped: number;
}

/** Runs one task; `waitMs` is how long it waited in the queue. */
export type Executor<T, R> = (task: T, waitMs: number) => Promise<R>;

export interface RunEvents {
  /** The task left the queue and started. */
  onStart?(waitMs: number): void;
}

interface Entry<T, R> {
  task: T;
  enqueuedAt: number;
  resolve(value: R): void;
  reject(err: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  events: RunEvents | undefined;
}

export function codedError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

export class FifoQueue<T, R> {
  private readonly waiting: Array<Entry<T, R> | undefined> = [];
  private head = 0;
  private queued = 0;
  private running = 0;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  private readonly counters = { longestWaitMs: 0, started: 0, dropped: 0 };

  constructor(
    private readonly exec: Executor<T, R>,
    private readonly opts: FifoQueueOptions,
  ) {
    if (!(opts.concurrency >= 1)) throw new RangeError(`Expected concurrency >= 1 but received ${opts.concurrency}`);
    if (!(opts.maxQueue >= 0)) throw new RangeError(`Expected maxQueue >= 0 but received ${opts.maxQueue}`);
  }

  /**
   * Run `task` once a slot is free, in arrival order. Rejects with `.code`:
   * 'queue_full' (no room), 'aborted' (the signal fired: a waiting task is dropped and never runs;
   * a running one finishes in the background and its result is thrown away), 'pool_closed'.
   */
  run(task: T, signal?: AbortSignal, events?: RunEvents): Promise<R> {
    if (this.closed) return Promise.reject(codedError('pool_closed', 'The worker pool is closed'));
    if (signal?.aborted) return Promise.reject(codedError('aborted', 'The request was aborted before it started'));
    if (this.queued === 0 && this.running < this.opts.concurrency) return this.start(task, 0, signal, events);
    if (this.queued >= this.opts.maxQueue) return Promise.reject(codedError('queue_full', 'The work queue is full'));

    return new Promise<R>((resolve, reject) => {
      const entry: Entry<T, R> = {
        task,
        enqueuedAt: performance.now(),
        resolve,
        reject,
        signal,
        events,
        onAbort: () => {
          const i = this.waiting.indexOf(entry, this.head);
          if (i < 0) return; // already started: start() handles it
          this.waiting[i] = undefined; // a hole: skipped by the pump, O(1) here
          this.queued--;
          this.counters.dropped++;
          reject(codedError('aborted', 'The request was aborted while queued'));
          this.compact();
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.waiting.push(entry);
      this.queued++;
    });
  }

  stats(): FifoQueueStats {
    return { running: this.running, queued: this.queued, ...this.counters };
  }

  /** Resolves once nothing runs or waits (tasks whose callers left included). */
  whenIdle(): Promise<void> {
    return this.running === 0 && this.queued === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stop taking tasks; waiting ones are rejected with 'pool_closed'. Resolves once nothing runs. */
  close(): Promise<void> {
    this.closed = true;
    for (let i = this.head; i < this.waiting.length; i++) {
      const e = this.waiting[i];
      if (!e) continue;
      e.signal?.removeEventListener('abort', e.onAbort);
      e.reject(codedError('pool_closed', 'The worker pool closed before the task started'));
    }
    this.waiting.length = 0;
    this.head = 0;
    this.queued = 0;
    return this.whenIdle();
  }

  private start(task: T, waitMs: number, signal: AbortSignal | undefined, events: RunEvents | undefined): Promise<R> {
    this.running++;
    this.counters.started++;
    if (waitMs > this.counters.longestWaitMs) this.counters.longestWaitMs = waitMs;
    let work: Promise<R>;
    try {
      events?.onStart?.(waitMs);
      work = this.exec(task, waitMs);
    } catch (err) {
      work = Promise.reject(err);
    }
    // The slot stays taken until the work itself settles, whoever stopped waiting for it.
    work.then(
      () => this.finish(),
      () => this.finish(),
    );
    if (!signal) return work;
    return new Promise<R>((resolve, reject) => {
      const onAbort = () => reject(codedError('aborted', 'The request was aborted while its task ran'));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  private finish(): void {
    this.running--;
    this.pump();
    if (this.running === 0 && this.queued === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private pump(): void {
    while (this.running < this.opts.concurrency && this.queued > 0) {
      const e = this.waiting[this.head];
      this.waiting[this.head++] = undefined;
      if (!e) continue; // a dropped task's hole
      this.queued--;
      e.signal?.removeEventListener('abort', e.onAbort);
      const waitMs = performance.now() - e.enqueuedAt;
      this.start(e.task, waitMs, e.signal, e.events).then(e.resolve, e.reject);
    }
    this.compact();
  }

  /** Drop the consumed prefix now and then, so the array does not grow for ever. */
  private compact(): void {
    if (this.queued === 0) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
  }
}
