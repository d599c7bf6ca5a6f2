// The request path's statements, prepared once per connection under their names, and the account row
// as the database returns it.

import type { AccountRecord } from '../records.js';

export interface AccountRow {
  id: string;
  label: string;
  subscription: string;
  payg: string;
  enterprise: string;
  free_calls_per_month: string;
  free_calls_used: string;
  free_month: string;
  concurrency: string;
  rate_per_minute: string;
  created_at: string;
}

// bigint columns arrive as strings; every balance is at most 2^53-1 (a CHECK), so Number is exact.
export function recordOf(r: AccountRow): AccountRecord {
  return {
    id: r.id,
    label: r.label,
    subscription: Number(r.subscription),
    payg: Number(r.payg),
    enterprise: Number(r.enterprise),
    freeCallsPerMonth: Number(r.free_calls_per_month),
    freeCallsUsed: Number(r.free_calls_used),
    freeMonth: r.free_month,
    concurrency: Number(r.concurrency),
    ratePerMinute: Number(r.rate_per_minute),
    createdAt: Number(r.created_at),
  };
}

export const Q = {
  authenticate: 'SELECT a.* FROM cutout.keys k JOIN cutout.accounts a ON a.id = k.account_id WHERE k.hash = $1 AND k.revoked_at IS NULL',
  account: 'SELECT * FROM cutout.accounts WHERE id = $1',
  acquireSlot: 'SELECT cutout.acquire_slot($1, $2, $3, $4, $5, $6) AS ok',
  releaseSlot: 'DELETE FROM cutout.slots WHERE id = $1',
  takeRate: 'SELECT o_ok, o_used FROM cutout.take_rate($1, $2, $3, $4)',
  peekRate: 'SELECT window_start, used FROM cutout.rate WHERE account_id = $1',
  reserve: 'SELECT o_size, o_credits, o_free_call FROM cutout.reserve($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
  // The one commit that must be on disk before its answer (a 200 goes out only after it): whatever the
  // connection's durability, this transaction commits with synchronous_commit on (set_config is local to it).
  settle: `WITH h AS (DELETE FROM cutout.holds WHERE id = $1 RETURNING *)
           INSERT INTO cutout.usage (reservation_id, t, account_id, size, credits, free_call, output_pixels, status,
                                     draw_subscription, draw_payg, draw_enterprise, free_month)
           SELECT h.id, $2, h.account_id, h.size, h.credits, h.free_month IS NOT NULL, $3, $4,
                  h.draw_subscription, h.draw_payg, h.draw_enterprise, h.free_month
             FROM h CROSS JOIN (SELECT set_config('synchronous_commit', 'on', true)) durable`,
  voidReservation: 'SELECT cutout.void_reservation($1) AS outcome',
  refund: 'SELECT cutout.refund($1) AS ok',
  takeStorage: 'SELECT o_ok, o_used FROM cutout.take_storage($1, $2, $3)',
  releaseStorage: 'UPDATE cutout.storage SET bytes = greatest(0, bytes - $2), files = greatest(0, files - 1) WHERE account_id = $1',
  storageUsed: 'SELECT bytes, files FROM cutout.storage WHERE account_id = $1',
  renew: 'SELECT cutout.renew($1, $2, $3)',
  probe: 'SELECT 1',
  // After an outage: this node's rows that it no longer tracks, made before the sweep began (pg-reconcile.ts).
  sweepOwnSlots: 'DELETE FROM cutout.slots WHERE owner = $1 AND created_at < $2 AND NOT (id = ANY ($3::text[]))',
  sweepOwnHolds: `SELECT h.credits, h.free_month IS NOT NULL AS free_call, cutout.refund(h.id) AS ok
                    FROM cutout.holds h WHERE h.owner = $1 AND h.created_at < $2 AND NOT (h.id = ANY ($3::text[]))`,
  reap: 'SELECT o_holds, o_credits, o_free_calls, o_slots FROM cutout.reap()',
} as const;

export type QueryName = keyof typeof Q;
