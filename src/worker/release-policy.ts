// When a staged photo worker hands its task's memory back (a full GC, a turn of the event loop for
// the Buffer finalizers, malloc_trim: ~8 ms for a 1 MP photo, worker.ts's releaseMemory). Not after
// each `finish`: that would hold the photo's answer back by the release's time. The garbage waits
// until it reaches a bound (under steady load a GPU box's photo workers collect about every sixth
// 1 MP photo), or until the pool's pipeline empties: the pool then sends every worker a `release`
// task, at low priority, which runs after the answers have gone (docs/memory.md, "Composite scratch
// and the release on the staged path"). So an idle worker keeps no garbage past its last photo.

/** Garbage a staged photo worker may leave uncollected between releases. */
export const DEFERRED_GARBAGE_BYTES = 64 * 1024 * 1024;

/** Roughly what finishing a photo leaves behind: its RGBA and the buffers made from it, and the mask. */
export function finishGarbageBytes(plan: { width: number; height: number }, maskBytes: number): number {
  return plan.width * plan.height * 8 + maskBytes;
}

export class ReleasePolicy {
  private pending = 0;
  constructor(private readonly limit = DEFERRED_GARBAGE_BYTES) {}

  /** A task left `bytes` of garbage; true when the worker should release now. */
  afterTask(bytes: number): boolean {
    this.pending += Math.max(0, bytes);
    if (this.pending < this.limit) return false;
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
