// Per-account storage used by /v1.0/improve uploads, in LMDB so the quota holds across server processes.
// Taking and giving back are short write transactions: the check against the quota and the new total
// commit together, so two processes cannot both take the last megabytes.

import type { AccountView, StorageUse } from './ledger.js';
import type { LedgerDb } from './db.js';
import type { StorageRecord } from './records.js';

/** Taken (a synchronous, idempotent `release()`; it may throw DiskFullError and be called again) or refused. */
export type HeldStorage = { ok: true; release(): void } | { ok: false; usedBytes: number };

const NONE: StorageRecord = { bytes: 0, files: 0 };

/** Count one file of `bytes` against `quotaBytes`; refused (nothing written) when it would pass it. */
export function reserveStorage(db: LedgerDb, account: AccountView, bytes: number, quotaBytes: number): HeldStorage {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`Expected a byte count for bytes but received ${String(bytes)}`);
  const taken = db.write((): HeldStorage => {
    const used = db.storage.get(account.id) ?? NONE;
    if (used.bytes + bytes > quotaBytes) return { ok: false, usedBytes: used.bytes };
    db.storage.putSync(account.id, { bytes: used.bytes + bytes, files: used.files + 1 });
    return { ok: true, release: () => {} };
  });
  if (!taken.ok) return taken;
  let released = false;
  return {
    ok: true,
    release(): void {
      if (released) return;
      db.write(() => {
        const used = db.storage.get(account.id) ?? NONE;
        db.storage.putSync(account.id, { bytes: Math.max(0, used.bytes - bytes), files: Math.max(0, used.files - 1) });
      }, 'give');
      // Only once it is written: a release the disk refused is tried again.
      released = true;
    },
  };
}

export function storageUsed(db: LedgerDb, accountId: string): StorageUse {
  db.root.resetReadTxn();
  return { ...(db.storage.get(accountId) ?? NONE) };
}
