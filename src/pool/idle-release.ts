// Hot while busy, lean when idle (docs/memory.md): the photo workers keep their memory mapped from
// one request to the next (ONNX Runtime's tensors and the composite's scratch in the addon's block
// cache, decode and encode buffers in malloc's heaps, the worker heaps). Handing it back after every
// request made every request fault it in again: on hosts where a fresh page costs 2–13 µs (microVMs
// with free page reporting, as serverless and container platforms run) the CPU path ran 1.65–1.71×
// slower. Once the pool has had nothing to do for IDLE_RELEASE_MS, every worker hands it all back.

import { collectGarbage } from '../process/collect-garbage.js';

/**
 * How long a pool stays empty before its workers hand their memory back. A client sending one photo
 * after another (a catalogue script, a benchmark at concurrency 1) empties the pool between its
 * requests for a few milliseconds: those gaps must not release. An idle server is back to its idle
 * footprint well within 5 s of its last answer.
 */
export const IDLE_RELEASE_MS = 3000;

/**
 * Calls `release` once the pool has stayed empty for `delayMs`; any new work puts it off again. The
 * calling (main) thread collects its own garbage first: the requests' bodies and the results
 * transferred from the workers live in it until V8 collects them, and the workers' `malloc_trim`
 * that follows can only hand back what was freed (a burst of photos: 251 MB idle without it, ~170 with it).
 */
export class IdleRelease {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly release: () => void,
    private readonly delayMs = IDLE_RELEASE_MS,
  ) {}

  /** Work arrived: whatever release was pending waits for the next empty spell. */
  busy(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The pool is empty now. */
  idle(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      collectGarbage();
      // The Buffer finalizers run on the next turn: the workers' trim comes after them.
      setImmediate(() => !this.closed && this.release());
    }, this.delayMs).unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
