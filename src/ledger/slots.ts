// Per-account concurrency slots, stored in LMDB so the cap holds across server processes. Each slot records
// its owner; slots of dead owners are freed by reconcileDeadOwners and, lazily, when an account hits its cap.

import type { AccountView } from './ledger.js';
import type { LedgerDb } from './db.js';
import { SELF, isOwnerAlive, isSelf } from './owner.js';
import { nextId } from './ids.js';

/** A slot held in this process; `release()` is synchronous (one LMDB delete), idempotent, and may throw DiskFullError (then call it again). */
export interface HeldSlot {
  release(): void;
}

function rangeOf(accountId: string): { start: [string]; end: [string, string] } {
  // '\uffff' sorts after every generated slot id.
  return { start: [accountId], end: [accountId, '\uffff'] };
}

/** Frees the account's slots held by dead processes. Must run inside a write transaction. */
function reclaimDead(db: LedgerDb, accountId: string): number {
  let freed = 0;
  for (const { key, value } of [...db.slots.getRange(rangeOf(accountId))]) {
    if (isSelf(value.owner) || isOwnerAlive(value.owner)) continue;
    db.slots.removeSync(key);
    freed++;
  }
  return freed;
}

export function acquireSlot(db: LedgerDb, account: AccountView, now: number): HeldSlot | null {
  const key = db.write((): [string, string] | null => {
    const range = rangeOf(account.id);
    let held = db.slots.getKeysCount(range);
    // Only at the cap is it worth checking /proc for dead holders.
    if (held >= account.concurrency) held -= reclaimDead(db, account.id);
    if (held >= account.concurrency) return null;
    const k: [string, string] = [account.id, nextId()];
    db.slots.putSync(k, { owner: SELF, createdAt: now });
    return k;
  });
  if (!key) return null;
  let released = false;
  return {
    release(): void {
      if (released) return;
      db.write(() => db.slots.removeSync(key), 'give');
      released = true;
    },
  };
}
