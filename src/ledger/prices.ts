// Every price and account default lives here. Credits are integers: remove.bg bills preview at 0.25, we
// bill whole credits and let free calls cover previews instead.

import type { SizeTier } from '../domain/removal.js';

/** Credits per request by output tier. */
export const PRICES: Readonly<Record<SizeTier, number>> = Object.freeze({
  preview: 1,
  medium: 1,
  hd: 1,
  full: 1,
  '50MP': 1,
});

/** Tiers a monthly free call may pay for (remove.bg's free calls are for previews). */
export const FREE_CALL_TIERS: ReadonlySet<SizeTier> = new Set<SizeTier>(['preview']);

/** `size=auto`: the tier given when the account can pay for it, else the fallback. */
export const AUTO_PREFERRED: SizeTier = 'full';
export const AUTO_FALLBACK: SizeTier = 'preview';

/** Balances are drawn in this order. */
export const SPEND_ORDER = ['subscription', 'payg', 'enterprise'] as const;
export type BalanceName = (typeof SPEND_ORDER)[number];

export const DEFAULT_FREE_CALLS_PER_MONTH = 50;
export const DEFAULT_CONCURRENCY = 4;
/** Megapixel units per minute (remove.bg: 500). */
export const DEFAULT_RATE_PER_MINUTE = 500;
export const RATE_WINDOW_SECONDS = 60;

/** Demo account made on first start with an empty ledger. */
export const DEMO_CREDITS = 10;
export const DEMO_FREE_CALLS = 50;
export const DEMO_ACCOUNT = Object.freeze({ label: 'demo', subscription: DEMO_CREDITS, freeCallsPerMonth: DEMO_FREE_CALLS });
