// A RemovalPool stand-in for protocol tests: no model, instant, scriptable.
// By default it "removes" by echoing the input bytes back with the requested content type, and
// reads PNG dimensions from the IHDR so X-Width/X-Height are real. It transfers the input like the
// real pool (the caller's buffer is detached afterwards) and queues in the real pool's FifoQueue, so
// aborts, deadlines and ordering behave as in production (`new FakePool({ workers: 1 })` to queue).

import { FifoQueue } from '../../src/pool/fifo-queue.js';
import { transferListOf } from '../../src/image/owned-bytes.js';
import type { PoolStats, RemovalPool, RunEvents, RunPriority } from '../../src/pool/pool-api.js';
import type { ContentType } from '../../src/domain/removal.js';
import type { RemoveResult, RemoveTask } from '../../src/pool/protocol.js';

export interface Gate {
  /** Resolves when a run() has entered the gate ("inference" started). */
  started: Promise<RemoveTask>;
  /** Let the held run() finish. */
  release(): void;
}

const CONTENT_TYPES: Record<string, ContentType> = {
  auto: 'image/png',
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  zip: 'application/zip',
};

export function pngSize(bytes: Uint8Array): { width: number; height: number } | null {
  if (bytes.length < 24 || bytes[0] !== 0x89 || bytes[1] !== 0x50) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

export class FakePool implements RemovalPool {
  ready = true;
  closed = false;
  readonly tasks: RemoveTask[] = [];
  /** Replace to script results (typed failures, odd sizes). */
  respond: (task: RemoveTask) => RemoveResult | Promise<RemoveResult> = (task) => defaultResult(task);
  /** Make the next run() reject with this `.code` (e.g. 'queue_full'). */
  rejectNextWith: string | null = null;
  private gates: Array<{ enter: (t: RemoveTask) => void; wait: Promise<void> }> = [];
  running = 0;
  readonly workers: number;
  private readonly queue: FifoQueue<RemoveTask, RemoveResult>;

  /** Priorities of the run() calls, in call order. */
  readonly priorities: RunPriority[] = [];
  /** Resolvers waiting for the n-th run() call (see whenRuns). */
  private runWaiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(opts: { workers?: number; maxQueue?: number; lowPriorityPlaces?: number } = {}) {
    this.workers = opts.workers ?? Number.POSITIVE_INFINITY;
    this.queue = new FifoQueue((task) => this.execute(task), {
      concurrency: this.workers,
      maxQueue: opts.maxQueue ?? Number.POSITIVE_INFINITY,
      ...(opts.lowPriorityPlaces !== undefined && { maxLow: opts.lowPriorityPlaces }),
    });
  }

  /** Resolves once run() has been called `count` times in all (queued or refused by then). */
  whenRuns(count: number): Promise<void> {
    if (this.priorities.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.runWaiters.push({ count, resolve }));
  }

  /** Hold the next run() inside "inference" until released. */
  hold(): Gate {
    let enter!: (t: RemoveTask) => void;
    let release!: () => void;
    const started = new Promise<RemoveTask>((r) => (enter = r));
    const wait = new Promise<void>((r) => (release = r));
    this.gates.push({ enter, wait });
    return { started, release };
  }

  run(task: RemoveTask, signal?: AbortSignal, events?: RunEvents, priority: RunPriority = 'normal'): Promise<RemoveResult> {
    // enqueue() reaches the queue synchronously (before its first await): by the time whenRuns()
    // resolves, the task waits in the queue or was refused.
    const result = this.enqueue(task, signal, events, priority);
    this.priorities.push(priority);
    const n = this.priorities.length;
    this.runWaiters = this.runWaiters.filter((w) => (w.count <= n ? (w.resolve(), false) : true));
    return result;
  }

  private async enqueue(task: RemoveTask, signal: AbortSignal | undefined, events: RunEvents | undefined, priority: RunPriority): Promise<RemoveResult> {
    if (this.closed) throw Object.assign(new Error('closed'), { code: 'pool_closed' });
    if (signal?.aborted) throw Object.assign(new Error('aborted'), { code: 'aborted' });
    if (this.rejectNextWith) {
      const code = this.rejectNextWith;
      this.rejectNextWith = null;
      throw Object.assign(new Error(code), { code });
    }
    return this.queue.run(task, signal, events, priority);
  }

  private async execute(task: RemoveTask): Promise<RemoveResult> {
    // Take the input the way postMessage's transfer list would: the caller's view is detached.
    const input = structuredClone(task.input, { transfer: transferListOf(task.input) });
    const owned: RemoveTask = { input, options: task.options };
    this.tasks.push(owned);
    this.running++;
    try {
      const gate = this.gates.shift();
      if (gate) {
        gate.enter(owned);
        await gate.wait; // running: an abort does not stop it (as in the real pool); the caller stops waiting
      }
      return await this.respond(owned);
    } finally {
      this.running--;
    }
  }

  /** Resolves when no task runs or waits (also the ones whose callers left). */
  whenIdle(): Promise<void> {
    return this.queue.whenIdle();
  }

  stats(): PoolStats {
    return { workers: Number.isFinite(this.workers) ? this.workers : 1, ...this.queue.stats() };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ready = false;
  }
}

export function defaultResult(task: RemoveTask): RemoveResult {
  const size = pngSize(task.input) ?? { width: 64, height: 48 };
  return {
    ok: true,
    data: task.input,
    contentType: CONTENT_TYPES[task.options.format] ?? 'image/png',
    width: size.width,
    height: size.height,
    inputWidth: size.width,
    inputHeight: size.height,
    foreground: { top: 1, left: 2, width: Math.max(1, size.width - 4), height: Math.max(1, size.height - 2) },
    timings: {},
  };
}
