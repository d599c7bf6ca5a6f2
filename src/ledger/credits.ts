// Reserve / settle / refund. Each is one synchronous LMDB write transaction: the read-check-write is atomic
// across threads and processes, and the hold records exactly which balances paid so a refund can undo it.

import type { RequestedSize, SizeTier } from '../domain/removal.js';
import { InsufficientCreditsError, type Reservation, type UsageRecord } from './ledger.js';
import type { LedgerDb } from './db.js';
import { freeCallsLeft, monthOf, type AccountRecord } from './accounts.js';
import { AUTO_FALLBACK, AUTO_PREFERRED, FREE_CALL_TIERS, PRICES, SPEND_ORDER, type BalanceName } from './prices.js';
import { SELF, type Owner } from './owner.js';
import { randomBase62 } from './key-hash.js';
import { appendUsage } from './usage.js';

export type Draws = Record<BalanceName, number>;

export interface HoldRecord {
  accountId: string;
  size: SizeTier;
  credits: number;
  draws: Draws;
  /** Month whose free-call counter this hold incremented; absent when no free call was used. */
  freeMonth?: string;
  owner: Owner;
  createdAt: number;
}

export interface Quote {
  size: SizeTier;
  credits: number;
  freeCall: boolean;
}

/** What a request would cost this account now, or null when it cannot pay. Pure. */
export function quote(account: AccountRecord, requested: RequestedSize, month: string): Quote | null {
  const total = account.subscription + account.payg + account.enterprise;
  const hasFree = freeCallsLeft(account, month) > 0;
  const priceFor = (size: SizeTier): Quote | null => {
    if (hasFree && FREE_CALL_TIERS.has(size)) return { size, credits: 0, freeCall: true };
    const credits = PRICES[size];
    return total >= credits ? { size, credits, freeCall: false } : null;
  };
  if (requested !== 'auto') return priceFor(requested);
  // Credits first buy the preferred tier; a free call only ever buys the fallback.
  const preferred = total >= PRICES[AUTO_PREFERRED] ? priceFor(AUTO_PREFERRED) : null;
  return preferred ?? priceFor(AUTO_FALLBACK);
}

/** Splits `credits` across balances in spend order. Caller has checked the total. */
export function drawFrom(account: AccountRecord, credits: number): Draws {
  const draws: Draws = { subscription: 0, payg: 0, enterprise: 0 };
  let left = credits;
  for (const name of SPEND_ORDER) {
    const take = Math.min(left, account[name]);
    draws[name] = take;
    left -= take;
  }
  return draws;
}

// Unique across processes and restarts without coordination.
const idPrefix = randomBase62(8) + '.';
let idCounter = 0;

export function reserveCredits(db: LedgerDb, accountId: string, requested: RequestedSize, now: number): Reservation {
  const month = monthOf(now);
  return db.root.transactionSync(() => {
    const account = db.accounts.get(accountId);
    if (!account) throw new Error(`Unknown account ${accountId}`);
    const q = quote(account, requested, month);
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
    const id = idPrefix + (idCounter++).toString(36);
    const hold: HoldRecord = { accountId, size: q.size, credits: q.credits, draws, owner: SELF, createdAt: now };
    if (q.freeCall) hold.freeMonth = month;
    db.accounts.putSync(accountId, next);
    db.holds.putSync(id, hold);
    return { id, accountId, size: q.size, credits: q.credits, freeCall: q.freeCall };
  });
}

/** Puts a hold's credits and free call back. Must run inside a write transaction. Returns false if gone. */
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
  return db.root.transactionSync(() => undoHold(db, id) !== null);
}

/** Final charge + usage record. A second settle, or a settle after refund, changes nothing. */
export function settleHold(db: LedgerDb, reservation: Reservation, usage: UsageRecord, now: number): boolean {
  return db.root.transactionSync(() => {
    const hold = db.holds.get(reservation.id);
    if (!hold) return false;
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
    return true;
  });
}
