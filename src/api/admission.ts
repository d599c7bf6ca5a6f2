// The per-key admission rules /removebg and /improve share, in one place: whose share of the
// bodies-in-memory budget the body counts against (http/body-budget.ts: its concurrency cap × the body
// limit; 429 over it, before the body is read), then, once the body is in, a concurrency slot (429 when
// the key is at its cap) and one rate unit up front (429 + rate headers when over the minute's units).

import type { AccountView, Ledger, RateState, Slot } from '../ledger/ledger.js';
import type { BodyOwner } from '../http/body-budget.js';
import { rateHeaders } from './auth.js';
import { concurrencyLimitExceeded, rateLimitExceeded, withHeaders } from './errors.js';

export interface Admission {
  /** Release in a `finally` (idempotent). */
  slot: Slot;
  /** The rate state after this request's first unit. */
  rate: RateState;
}

/** The key's account as the owner of a body: its share of the budget follows its concurrency cap. */
export function bodyOwner(account: AccountView): BodyOwner {
  return { account: account.id, concurrency: account.concurrency };
}

export async function admit(ledger: Ledger, account: AccountView): Promise<Admission> {
  const slot = await ledger.acquireSlot(account);
  if (!slot) throw concurrencyLimitExceeded();
  try {
    const rate = await ledger.takeRate(account, 1);
    if (!rate.ok) throw withHeaders(rateLimitExceeded(rate.retryAfter), rateHeaders(rate));
    return { slot, rate };
  } catch (err) {
    await slot.release();
    throw err;
  }
}
