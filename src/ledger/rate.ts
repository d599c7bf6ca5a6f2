// Fixed-window per-minute rate limit in megapixel units, stored in LMDB so every process shares one budget.
// Windows are aligned to wall-clock minutes; `reset` is the window's end in unix seconds.

import type { AccountView, RateDecision, RateState } from './ledger.js';
import type { LedgerDb } from './db.js';
import type { RateRecord } from './records.js';
import { rateCost, refusal, stateOf, windowOf } from './rate-window.js';

function usedIn(rec: RateRecord | undefined, window: number): number {
  return rec && rec.window === window ? rec.used : 0;
}

export function takeRate(db: LedgerDb, account: AccountView, units: number, nowMs: number): RateDecision {
  const cost = rateCost(units);
  const window = windowOf(nowMs);
  const limit = account.ratePerMinute;
  return db.write((): RateDecision => {
    const used = usedIn(db.rate.get(account.id), window);
    if (used + cost > limit) return refusal(stateOf(limit, used, window), nowMs);
    db.rate.putSync(account.id, { window, used: used + cost });
    return { ok: true, ...stateOf(limit, used + cost, window) };
  });
}

export function peekRate(db: LedgerDb, account: AccountView, nowMs: number): RateState {
  db.root.resetReadTxn();
  const window = windowOf(nowMs);
  return stateOf(account.ratePerMinute, usedIn(db.rate.get(account.id), window), window);
}
