// The staged path's photo memory, handed back by the photo workers once a photo is finished
// (FinishReply.sparePhoto) and handed to the next `prepare` (RemoveTask.photoMemory): a plain photo
// decoded once then decodes into pages already resident instead of a fresh buffer per photo (a 1 MP
// photo's 4 MB: ~500–950 faults at ~14 µs each on these hosts; over 2 MiB huge pages make fresh
// memory cheap). Which photo comes next is not known before its `prepare`, so the one handed back
// last goes first (the same size as the next, most of the time); one too small comes back unused.
// Kept while busy, up to a count and a size each; handed to a photo worker's idle `release`.

/** The largest photo memory kept: 16 MiB, an RGBA photo up to 4 MP. */
export const SPARE_PHOTO_MAX_BYTES = 16 * 1024 * 1024;

export class SparePhotos {
  private readonly spare: ArrayBuffer[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxBytes = SPARE_PHOTO_MAX_BYTES,
  ) {}

  /** Memory a worker handed back: kept when it is not too big and there is room. */
  put(buffer: ArrayBuffer): void {
    if (buffer.byteLength > 0 && buffer.byteLength <= this.maxBytes && this.spare.length < this.limit) this.spare.push(buffer);
  }

  /** The memory handed back last, now no longer kept; undefined when none is. */
  take(): ArrayBuffer | undefined {
    return this.spare.pop();
  }

  /** Every kept buffer, now no longer kept (for the idle release). */
  drain(): ArrayBuffer[] {
    return this.spare.splice(0);
  }

  get count(): number {
    return this.spare.length;
  }
}
