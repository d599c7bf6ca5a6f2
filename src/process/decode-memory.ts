// The decode memory of one process, shared by all its photo workers: a SharedArrayBuffer handed to
// every worker in workerData, counted in KiB with Atomics. A worker takes its photo's decode
// estimate before decoding and gives it back when the task's memory has been released; one that
// would take the total past the ceiling waits (Atomics.waitAsync) until others give back. One
// decode alone always goes ahead, so a photo over the ceiling waits for an idle process, never for
// ever.
//
// Each running task has a slot (the main thread hands one out with the task and takes it back when
// the task settles), and what a task holds is recorded in its slot: a worker that dies mid-task
// cannot take its share with it, because the main thread releases the slot whatever happened
// (release is idempotent).
//
//   cells[0]       KiB held by all slots
//   cells[1 + i]   KiB held by slot i
import { MAX_DECODE_BYTES_IN_FLIGHT } from '../domain/removal.js';

/** What travels to the workers (structured clone shares the buffer). */
export interface DecodeMemoryShare {
  buffer: SharedArrayBuffer;
  ceilingBytes: number;
}

const KIB = 1024;

// Node 20 has Atomics.waitAsync; TypeScript's ES2023 lib does not declare it.
type WaitAsync = (
  cells: Int32Array,
  index: number,
  value: number,
) => { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export class DecodeMemory {
  private readonly cells: Int32Array;
  private readonly ceiling: number;
  private readonly free: number[];

  constructor(readonly share: DecodeMemoryShare) {
    this.cells = new Int32Array(share.buffer);
    this.ceiling = Math.ceil(share.ceilingBytes / KIB);
    this.free = Array.from({ length: this.cells.length - 1 }, (_, i) => this.cells.length - 2 - i);
  }

  /** A new counter with `slots` slots: one per task that can run at once. */
  static create(slots: number, ceilingBytes = MAX_DECODE_BYTES_IN_FLIGHT): DecodeMemory {
    return new DecodeMemory({ buffer: new SharedArrayBuffer(4 * (1 + slots)), ceilingBytes });
  }

  /** Main thread: a free slot for a task about to be handed to a worker. */
  claimSlot(): number {
    const slot = this.free.pop();
    if (slot === undefined) throw new Error('Expected a free decode-memory slot: more tasks run than the pool has slots for');
    return slot;
  }

  /** Main thread: the task settled (whatever happened to its worker); its slot is free again. */
  returnSlot(slot: number): void {
    this.release(slot);
    this.free.push(slot);
  }

  /**
   * Worker: hold `bytes` for `slot`, waiting while the decodes in flight leave no room.
   * Resolves with the milliseconds waited.
   */
  async acquire(slot: number, bytes: number): Promise<number> {
    const need = Math.max(1, Math.ceil(bytes / KIB));
    const start = performance.now();
    for (;;) {
      const held = Atomics.load(this.cells, 0);
      if (held === 0 || held + need <= this.ceiling) {
        if (Atomics.compareExchange(this.cells, 0, held, held + need) !== held) continue;
        Atomics.add(this.cells, 1 + slot, need);
        return performance.now() - start;
      }
      // Wakes when a release changes the total (a change before this call returns 'not-equal').
      const wait = waitAsync(this.cells, 0, held);
      if (wait.async) await wait.value;
    }
  }

  /** Give back what `slot` holds (nothing when it holds nothing). */
  release(slot: number): void {
    const held = Atomics.exchange(this.cells, 1 + slot, 0);
    if (held === 0) return;
    Atomics.sub(this.cells, 0, held);
    Atomics.notify(this.cells, 0);
  }

  /** The most the decodes in flight may hold at once. */
  get ceilingBytes(): number {
    return this.share.ceilingBytes;
  }

  /** Bytes held by all slots now. */
  heldBytes(): number {
    return Atomics.load(this.cells, 0) * KIB;
  }
}
