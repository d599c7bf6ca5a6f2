// The staged path's mask buffers, handed back by the photo workers after their composite (FinishReply)
// and given to the next batch to fill (InferBatch.outputs): the inference worker then writes into
// pages that are resident instead of a fresh 4 MiB mapping per photo, 513–1,024 page faults, ~7 ms at
// 14 µs a fault (docs/gpu.md, "Page faults on the staged path"). Kept while busy, up to a batch's
// worth per inference worker; handed to a photo worker's idle `release`, whose GC frees them.

export class SpareMasks {
  private readonly spare: ArrayBuffer[] = [];
  /** The size of a mask of this pool's model, from the first one inferred: others are not kept. */
  private bytes = 0;

  constructor(private readonly limit: number) {}

  /** A mask the inference worker made: its size is the one kept from now on. */
  sizeFrom(mask: Float32Array): void {
    if (this.bytes === 0) this.bytes = mask.byteLength;
  }

  /** A finished photo's mask buffer, kept when it has a mask's size and there is room. */
  put(buffer: ArrayBuffer): void {
    if (this.bytes > 0 && buffer.byteLength === this.bytes && this.spare.length < this.limit) this.spare.push(buffer);
  }

  /** Up to `n` buffers for a batch of n photos, as Float32Arrays over them. */
  take(n: number): Float32Array[] {
    return this.spare.splice(0, n).map((b) => new Float32Array(b));
  }

  /** Every kept buffer, now no longer kept (for the idle release). */
  drain(): ArrayBuffer[] {
    return this.spare.splice(0);
  }
}
