// The per-minute rate window both backends share, pure: fixed 60 s windows aligned to the minute,
// `reset` = the window's end in unix seconds, fractional units rounded up.

import type { RateDecision, RateState } from './ledger.js';
import { RATE_WINDOW_SECONDS } from './prices.js';

/** Window start in unix seconds. */
export function windowOf(nowMs: number): number {
  const s = Math.floor(nowMs / 1000);
  return s - (s % RATE_WINDOW_SECONDS);
}

/** Units are never negative (interface contract); a fraction still costs a whole unit. */
export function rateCost(units: number): number {
  return Math.max(0, Math.ceil(units));
}

export function stateOf(limit: number, used: number, window: number): RateState {
  return { limit, remaining: Math.max(0, limit - used), reset: window + RATE_WINDOW_SECONDS };
}

/** A refusal charges nothing and says when to come back (at least 1 s). */
export function refusal(state: RateState, nowMs: number): RateDecision {
  return { ok: false, retryAfter: Math.max(1, Math.ceil(state.reset - nowMs / 1000)), ...state };
}
