// Reserve / settle / refund on LMDB. Each is one synchronous write transaction: the read-check-write is
// atomic across threads and processes (LMDB's write lock), and the hold records exactly which balances
// paid so a refund can undo it.

import type { RequestedSize } from '../domain/removal.js';
import { InsufficientCreditsError, type Reservation, type UsageRecord } from './ledger.js';
import type { LedgerDb } from './db.js';
import type { AccountRecord, HoldRecord } from './records.js';
import { freeCallsLeft, monthOf } from './account-rules.js';
import { drawFrom, offersFor, pickOffer } from './quote.js';
import { SELF } from './owner.js';
import { nextId } from './ids.js';
import { appendUsage } from './usage.js';

export function reserveCredits(db: LedgerDb, accountId: string, requested: RequestedSize, now: number): Reservation {
  const month = monthOf(now);
  const offers = offersFor(requested);
  return db.write(() => {
    const account = db.accounts.get(accountId);
    if (!account) throw new Error(`Unknown account ${accountId}`);
    const q = pickOffer(offers, account.subscription + account.payg + account.enterprise, freeCallsLeft(account, month));
    if (!q) throw new InsufficientCreditsError('Insufficient credits');

    const draws = drawFrom(account, q.credits);
    const next: AccountRecord = {
      ...account,
      subscription: account.subscription - draws.subscription,
      payg: account.payg - draws.payg,
      enterprise: account.enterprise - draws.enterprise,
    };
    if (q.freeCall) {
      next.freeCallsUsed = (account.freeMonth === month ? account.freeCallsUsed : 0) + 1;
      next.freeMonth = month;
    }
    const id = nextId();
    const hold: HoldRecord = { accountId, size: q.size, credits: q.credits, draws, owner: SELF, createdAt: now };
    if (q.freeCall) hold.freeMonth = month;
    db.accounts.putSync(accountId, next);
    db.holds.putSync(id, hold);
    return { id, accountId, size: q.size, credits: q.credits, freeCall: q.freeCall };
  });
}

/** Puts a hold's credits and free call back. Must run inside a write transaction. Null if already gone. */
export function undoHold(db: LedgerDb, id: string): HoldRecord | null {
  const hold = db.holds.get(id);
  if (!hold) return null;
  const account = db.accounts.get(hold.accountId);
  if (account) {
    const next: AccountRecord = {
      ...account,
      subscription: account.subscription + hold.draws.subscription,
      payg: account.payg + hold.draws.payg,
      enterprise: account.enterprise + hold.draws.enterprise,
    };
    // After a month rollover the old month's counter is gone; the new month owes nothing back.
    if (hold.freeMonth !== undefined && hold.freeMonth === account.freeMonth) {
      next.freeCallsUsed = Math.max(0, account.freeCallsUsed - 1);
    }
    db.accounts.putSync(hold.accountId, next);
  }
  db.holds.removeSync(id);
  return hold;
}

export function refundHold(db: LedgerDb, id: string): boolean {
  return db.write(() => undoHold(db, id) !== null, 'give');
}

/** What a settle changed, to undo it (unsettleHold). */
export interface SettledHold {
  id: string;
  hold: HoldRecord;
  usageKey: [number, string];
}

/**
 * Final charge + usage record. A second settle, or a settle after refund, changes nothing (null).
 * Synchronous: one transactionSync.
 */
export function settleHold(db: LedgerDb, reservation: Reservation, usage: UsageRecord, now: number): SettledHold | null {
  return db.write(() => {
    const hold = db.holds.get(reservation.id);
    if (!hold) return null;
    db.holds.removeSync(reservation.id);
    appendUsage(db, reservation.id, {
      t: now,
      accountId: hold.accountId,
      size: hold.size,
      credits: hold.credits,
      freeCall: hold.freeMonth !== undefined,
      outputPixels: usage.outputPixels,
      status: usage.status,
    });
    return { id: reservation.id, hold, usageKey: [now, reservation.id] };
  }, 'give');
}

/**
 * Undo a settle whose result will not go out (its flush to disk failed): the hold back, the usage entry
 * gone, so the request's refund gives the credit back. Synchronous: one transactionSync.
 */
export function unsettleHold(db: LedgerDb, settled: SettledHold): void {
  db.write(() => {
    db.usage.removeSync(settled.usageKey);
    db.holds.putSync(settled.id, settled.hold);
  }, 'give');
}
