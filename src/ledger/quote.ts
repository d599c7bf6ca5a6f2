// What a request costs, pure and backend-neutral. A requested size becomes a short list of offers; the
// first offer the account can take wins. LMDB runs `pickOffer` inside its write transaction; PostgreSQL
// runs the same loop in `cutout.reserve()` (pg/migrations.ts) over the same offers, passed as arrays.

import type { RequestedSize, SizeTier } from '../domain/removal.js';
import { AUTO_FALLBACK, AUTO_PREFERRED, FREE_CALL_TIERS, PRICES, SPEND_ORDER } from './prices.js';
import type { Draws } from './records.js';

export interface Offer {
  size: SizeTier;
  credits: number;
  /** A free call may pay for it instead of credits. */
  freeCallOk: boolean;
  /** Considered only when the credits are there (auto's preferred tier is never bought with a free call). */
  onlyIfPayable: boolean;
}

export interface Quote {
  size: SizeTier;
  credits: number;
  freeCall: boolean;
}

const offer = (size: SizeTier, onlyIfPayable: boolean): Offer => ({ size, credits: PRICES[size], freeCallOk: FREE_CALL_TIERS.has(size), onlyIfPayable });

/** `auto`: full when the credits are there, else preview (which may use a free call). */
export function offersFor(requested: RequestedSize): Offer[] {
  if (requested !== 'auto') return [offer(requested, false)];
  return [offer(AUTO_PREFERRED, true), offer(AUTO_FALLBACK, false)];
}

/** The first offer the account can take, or null when it cannot pay. */
export function pickOffer(offers: readonly Offer[], totalCredits: number, freeCallsLeft: number): Quote | null {
  for (const o of offers) {
    if (o.onlyIfPayable && totalCredits < o.credits) continue;
    if (o.freeCallOk && freeCallsLeft > 0) return { size: o.size, credits: 0, freeCall: true };
    if (totalCredits >= o.credits) return { size: o.size, credits: o.credits, freeCall: false };
  }
  return null;
}

/** Splits `credits` across balances in spend order. The caller has checked the total. */
export function drawFrom(balances: Readonly<Draws>, credits: number): Draws {
  const draws: Draws = { subscription: 0, payg: 0, enterprise: 0 };
  let left = credits;
  for (const name of SPEND_ORDER) {
    const take = Math.min(left, balances[name]);
    draws[name] = take;
    left -= take;
  }
  return draws;
}
