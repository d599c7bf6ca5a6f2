// When a staged photo worker hands its task's memory back (a full GC, a turn of the event loop for
// the Buffer finalizers, malloc_trim: ~8 ms for a 1 MP photo, worker.ts's releaseMemory). After
// every task, unless the pool said more work was waiting when the task started: then the release
// waits until the garbage left behind reaches a bound, so under load a GPU box's photo workers
// collect about every sixth 1 MP photo instead of after each (docs/memory.md, "Composite scratch
// and the release on the staged path"). When the pool's pipeline empties it sends every worker a
// `release` task, so an idle worker keeps no garbage past its last photo.

/** Garbage a staged photo worker may leave uncollected while work waits. */
export const DEFERRED_GARBAGE_BYTES = 64 * 1024 * 1024;

/** Roughly what finishing a photo leaves behind: its RGBA and the buffers made from it, and the mask. */
export function finishGarbageBytes(plan: { width: number; height: number }, maskBytes: number): number {
  return plan.width * plan.height * 8 + maskBytes;
}

export class ReleasePolicy {
  private pending = 0;
  constructor(private readonly limit = DEFERRED_GARBAGE_BYTES) {}

  /** A task left `bytes` of garbage; true when the worker should release now. */
  afterTask(bytes: number, moreWaiting: boolean): boolean {
    this.pending += Math.max(0, bytes);
    if (moreWaiting && this.pending < this.limit) return false;
    this.pending = 0;
    return true;
  }

  /** Garbage left for later now. */
  get deferred(): number {
    return this.pending;
  }

  /** The pool went idle: true (and the count cleared) when garbage was left for later. */
  whenIdle(): boolean {
    const had = this.pending > 0;
    this.pending = 0;
    return had;
  }
}
