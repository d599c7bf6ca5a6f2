// The per-key admission rules /removebg and /improve share, in one place: a concurrency slot (429 when
// the key is at its cap), then one rate unit up front (429 + rate headers when over the minute's units).

import type { AccountView, Ledger, RateState, Slot } from '../ledger/ledger.js';
import { rateHeaders } from './auth.js';
import { concurrencyLimitExceeded, rateLimitExceeded, withHeaders } from './errors.js';

export interface Admission {
  /** Release in a `finally` (idempotent). */
  slot: Slot;
  /** The rate state after this request's first unit. */
  rate: RateState;
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
