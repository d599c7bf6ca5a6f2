// Fixed-window per-minute rate limit in megapixel units, stored in LMDB so every process shares one budget.
// Windows are aligned to wall-clock minutes; `reset` is the window's end in unix seconds.

import type { AccountView, RateDecision, RateState } from './ledger.js';
import type { LedgerDb } from './db.js';
import { RATE_WINDOW_SECONDS } from './prices.js';

export interface RateRecord {
  /** Window start, unix seconds. */
  window: number;
  used: number;
}

function windowOf(nowMs: number): number {
  const s = Math.floor(nowMs / 1000);
  return s - (s % RATE_WINDOW_SECONDS);
}

function stateOf(limit: number, used: number, window: number): RateState {
  return { limit, remaining: Math.max(0, limit - used), reset: window + RATE_WINDOW_SECONDS };
}

function usedIn(rec: RateRecord | undefined, window: number): number {
  return rec && rec.window === window ? rec.used : 0;
}

export function takeRate(db: LedgerDb, account: AccountView, units: number, nowMs: number): RateDecision {
  // Units are never negative (interface contract); a fraction still costs a whole unit.
  const cost = Math.max(0, Math.ceil(units));
  const window = windowOf(nowMs);
  const limit = account.ratePerMinute;
  return db.root.transactionSync((): RateDecision => {
    const used = usedIn(db.rate.get(account.id), window);
    if (used + cost > limit) {
      const state = stateOf(limit, used, window);
      return { ok: false, retryAfter: Math.max(1, Math.ceil(state.reset - nowMs / 1000)), ...state };
    }
    db.rate.putSync(account.id, { window, used: used + cost });
    return { ok: true, ...stateOf(limit, used + cost, window) };
  });
}

export function peekRate(db: LedgerDb, account: AccountView, nowMs: number): RateState {
  db.root.resetReadTxn();
  const window = windowOf(nowMs);
  return stateOf(account.ratePerMinute, usedIn(db.rate.get(account.id), window), window);
}
