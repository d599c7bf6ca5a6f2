// Keeps LMDB from ever meeting a full disk. lmdb-js 3.5.6 turns a commit whose page write fails (ENOSPC,
// EIO) into heap corruption: its error text is sprintf'd into a 100-byte malloc that the text outgrows
// (docs/ledger.md, "Full disk"). So the ledger makes sure no commit needs new disk blocks: it keeps the
// data file allocated (zeros written past its end) some way beyond LMDB's last page, and refuses a write
// itself, before LMDB is called, when too little of that room is left. LMDB grows into the zeros by
// overwriting them, which needs no new blocks.
//
// `ensure` must run inside an LMDB write transaction: every process extends the file only under the
// write lock, so the zeros never land on a page a concurrent commit is writing. Pages past the file's end
// are referenced by no snapshot, so readers never see them.

import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';

/** The disk has no room for the ledger's next writes; nothing was written. */
export class DiskFullError extends Error {
  readonly code = 'ENOSPC';
}

/** New work (a hold, a slot, a rate unit, an account) or a give-back (settle, refund, release) that ends work already admitted. */
export type WriteKind = 'take' | 'give';

/** Bytes kept allocated past LMDB's last page (topped up when it falls under three quarters). */
export const ROOM_TARGET = 2 * 1024 * 1024;
/**
 * Least room for new work; a give-back needs only GIVE_ROOM. The gap is what the work already admitted
 * may still need: a settle or refund dirties a few pages, so 768 KiB covers ~20 pages for each of
 * ~40 requests in flight, and room is topped up again as soon as the disk has any.
 */
const TAKE_ROOM = 1024 * 1024;
const GIVE_ROOM = 256 * 1024;
/** While the disk is short, try to extend at most this often (each try is a failing write of zeros). */
const RETRY_MS = 1000;
const ZEROS = Buffer.alloc(256 * 1024);

export interface DiskRoomOptions {
  now?: () => number;
}

export interface DiskRoom {
  /** Inside a write transaction, before its first put: room for `kind`, or DiskFullError. */
  ensure(kind: WriteKind): void;
  /** True once a top-up failed and the room is still short of the target. */
  readonly short: boolean;
  /**
   * A commit failed for the disk after all (a copy-on-write filesystem can need new blocks to overwrite):
   * refuse every write until a top-up succeeds again, so LMDB does not take its failing path twice.
   */
  commitFailed(): void;
  close(): void;
}

/**
 * `file`: LMDB's data.mdb. `usedBytes()`: where LMDB's pages end, (last page + 1) × page size, read from
 * the env inside the transaction.
 */
export function diskRoom(file: string, usedBytes: () => number, opts: DiskRoomOptions = {}): DiskRoom {
  const now = opts.now ?? Date.now;
  const fd = openSync(file, 'r+');
  // The file only grows (LMDB never shrinks it), so a size read earlier can only understate the room:
  // it is read again only when the room looks short (fstat costs ~8 µs here; most writes skip it).
  let allocated = fstatSync(fd).size;
  let short = false;
  let nextTry = 0;
  let failed = false;

  /** Zeros from the file's end up to `target`; stops at the first refused write. */
  const extendTo = (target: number): void => {
    let pos = fstatSync(fd).size;
    try {
      while (pos < target) {
        const n = Math.min(ZEROS.length, target - pos);
        pos += writeSync(fd, ZEROS, 0, n, pos);
      }
      short = false;
      failed = false;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code !== 'ENOSPC' && code !== 'EDQUOT' && code !== 'EIO' && code !== 'EFBIG') throw err;
      short = true;
      nextTry = now() + RETRY_MS;
    }
    allocated = fstatSync(fd).size;
  };

  return {
    ensure(kind) {
      const used = usedBytes();
      if (failed || allocated - used < (ROOM_TARGET * 3) / 4) {
        allocated = fstatSync(fd).size; // another process may have topped it up
        if ((failed || allocated - used < (ROOM_TARGET * 3) / 4) && (!short || now() >= nextTry))
          extendTo(Math.max(used + ROOM_TARGET, allocated + ZEROS.length));
      }
      if (failed) throw new DiskFullError('No space left on device: the last commit failed for the disk and no room could be added since');
      const room = allocated - used;
      const least = kind === 'take' ? TAKE_ROOM : GIVE_ROOM;
      if (room < least) throw new DiskFullError(`No space left on device: ${room} bytes allocated ahead of the ledger's data, ${least} needed`);
    },
    get short() {
      return short;
    },
    commitFailed() {
      failed = true;
      short = true;
      nextTry = now() + RETRY_MS;
    },
    close: () => closeSync(fd),
  };
}
