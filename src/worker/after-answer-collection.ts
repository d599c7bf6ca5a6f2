// A removal leaves its big Buffers behind (the decoded photo alone is 80 MB at 20 MP). V8 would free
// them only once more external memory piled up, so the next removals would run on top of them, on
// fresh heap pages. So a removal's garbage is collected: a full GC, then a turn of the event loop, on
// which the finalizers of sharp's Buffers free their memory (5–12 ms in all); malloc keeps the freed
// pages, mapped, for the next photo.
//
// On the CPU path the collection runs once the answer has gone (the pool's workers idle in their
// event loop between tasks, src/pool/start-piscina.ts): the request no longer waits for it. A task
// that arrives before it has finished waits for it (`done`): for the GC and for the turn after it. A
// task that went on at once would decode its photo on top of the last one's memory; it did so when
// nothing before its decode yielded to the event loop (a synchronous header probe): +50 MB at
// bench:memory's peak (docs/native.md, "Memory per request").
import { collectGarbage } from '../process/collect-garbage.js';

/** A full GC, then the turn of the event loop whose finalizers free what it found. */
export async function collectTaskGarbage(): Promise<void> {
  collectGarbage();
  await new Promise((resolve) => setImmediate(resolve));
}

export class AfterAnswerCollection {
  private pending: Promise<void> | undefined;

  constructor(private readonly collect: () => Promise<void> = collectTaskGarbage) {}

  /** Collects on a later turn of the event loop: the answer being sent now goes first. */
  schedule(): void {
    const collection = new Promise((resolve) => setImmediate(resolve)).then(this.collect).finally(() => {
      if (this.pending === collection) this.pending = undefined;
    });
    this.pending = collection;
  }

  /** Resolves once the last scheduled collection has finished and its memory is freed (at once when none is pending). */
  async done(): Promise<void> {
    if (this.pending) await this.pending;
  }
}
