// When a staged photo worker collects its tasks' garbage (a full GC and a turn of the event loop for
// the Buffer finalizers: ~5–12 ms, worker.ts). Not after each `finish`: on a GPU box that would add
// a fifth to a 1 MP photo's CPU work. The garbage waits until it reaches a bound (under steady load
// the photo workers collect about every sixth 1 MP photo), or until the pool has been idle a while:
// the pool then sends every worker a `release` task, at low priority, which collects and hands all
// memory back (src/pool/idle-release.ts, docs/memory.md). So an idle worker keeps no garbage past its
// last photo. (The CPU path collects after every removal: there the GC is 1–2% of a request, less
// than the fresh heap pages a request would fault in while its garbage waited.)

/** Garbage a staged photo worker may leave uncollected between collections. */
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
