// The staged path's photo memory, handed back by the photo workers once a photo is finished
// (FinishReply.sparePhoto) and handed to the next `prepare` (RemoveTask.photoMemory): a plain photo
// decoded once then decodes into pages already resident instead of a fresh buffer per photo. Fresh
// memory costs on these hosts whatever its page size: a 1 MP photo's 4 MB, ~500–950 faults at ~14 µs
// each; a 12 MP photo's 48 MB in 2 MiB huge pages, 4 ms when the host still backs the pages the
// kernel hands out and 60–130 ms when it does not (memory freed and given back to the host, as a
// microVM's balloon does): stage 1 of a 12 MP photo took 100–220 ms into fresh memory, 90–100 into
// kept (docs/memory.md). Which photo comes next is not known before its `prepare`, so the one handed
// back last goes first (the same size as the next, most of the time); one too small comes back
// unused. Kept while busy, up to a count (one per photo worker) and a size each; handed to a photo
// worker's idle `release`.
import { OVERLAP_DECODE_MAX_BYTES } from '../domain/removal.js';

/** The largest photo memory kept: the largest photo stage 1 decodes once (64 MiB, an RGBA photo up to 16 MP). */
export const SPARE_PHOTO_MAX_BYTES = OVERLAP_DECODE_MAX_BYTES;

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
