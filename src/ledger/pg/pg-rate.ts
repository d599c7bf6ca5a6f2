// Per-minute rate windows on PostgreSQL: cutout.take_rate charges the window under the account's row
// lock; a peek reads it without charging.

import type { AccountView, RateDecision, RateState } from '../ledger.js';
import { rateCost, refusal, stateOf, windowOf } from '../rate-window.js';
import type { PgConnection } from './pg-connection.js';

export async function takeRate(conn: PgConnection, account: AccountView, units: number, nowMs: number): Promise<RateDecision> {
  const window = windowOf(nowMs);
  const limit = account.ratePerMinute;
  const { rows } = await conn.run<{ o_ok: boolean; o_used: string }>('takeRate', [account.id, window, rateCost(units), limit]);
  const state = stateOf(limit, Number(rows[0]!.o_used), window);
  return rows[0]!.o_ok ? { ok: true, ...state } : refusal(state, nowMs);
}

export async function peekRate(conn: PgConnection, account: AccountView, nowMs: number): Promise<RateState> {
  const window = windowOf(nowMs);
  const { rows } = await conn.run<{ window_start: string; used: string }>('peekRate', [account.id]);
  const used = rows[0] && Number(rows[0].window_start) === window ? Number(rows[0].used) : 0;
  return stateOf(account.ratePerMinute, used, window);
}
