// A CPU worker's photo memory, kept from one removal to the next: the photo decodes straight into it
// (codec.decodeRgbaOwned), into pages already resident rather than a fresh buffer per photo (a 1 MP
// photo's 4 MB: ~500–950 faults at ~14 µs each on these hosts, docs/memory.md). One removal at a time
// per worker (Piscina's concurrentTasksPerWorker: 1) and nothing of the photo outlives its removal
// (the answer is the encoded bytes), so the next photo may overwrite it. Handed back with the rest of
// the worker's memory when the pool goes idle (worker.ts, releaseMemory). The worker keeps a second
// one for the model input resized from such a photo (3 MB at 1024²).

export class PhotoBuffer {
  private kept: ArrayBuffer | undefined;

  /** `maxBytes`: the largest photo kept (bigger ones get memory of their own, freed with them). */
  constructor(readonly maxBytes: number) {}

  /** `bytes` bytes over the kept memory, grown to fit; undefined over maxBytes. */
  take(bytes: number): Uint8Array | undefined {
    if (bytes > this.maxBytes) return undefined;
    if (!this.kept || this.kept.byteLength < bytes) {
      this.kept = undefined; // the old one goes before the new one is made
      // Uninitialised (malloc, not calloc): the decode writes every byte.
      this.kept = Buffer.allocUnsafeSlow(bytes).buffer as ArrayBuffer;
    }
    return new Uint8Array(this.kept, 0, bytes);
  }

  /** Bytes kept now. */
  get bytes(): number {
    return this.kept?.byteLength ?? 0;
  }

  /** Forget the memory (freed with the next garbage collection). */
  drop(): void {
    this.kept = undefined;
  }
}
