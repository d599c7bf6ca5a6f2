// Giving back what owners no longer hold: the lapsed leases of any node (cutout.reap, from the lease
// keeper and `reconcile()`), and after an outage this node's own rows that it no longer tracks.

import type { ReconcileReport } from '../ledger.js';
import type { PgConnection } from './pg-connection.js';

/** Refunds lapsed holds and frees lapsed slots of every node, exactly once each. */
export async function reap(conn: PgConnection): Promise<ReconcileReport> {
  const { rows } = await conn.run<{ o_holds: string; o_credits: string; o_free_calls: string; o_slots: string }>('reap', []);
  const r = rows[0]!;
  return { holds: Number(r.o_holds), credits: Number(r.o_credits), freeCalls: Number(r.o_free_calls), slots: Number(r.o_slots) };
}

/**
 * Give back the slots and holds `node` owns in the database but does not track (`slots`, `holds`):
 * every live request of this node tracks its ids from before its insert (acquireSlot, reserve) until
 * after its delete (release, settle, refund), so such a row is one whose delete was lost. Only rows made
 * before `before`, when the sweep began: an insert begun after it is not in the snapshot but is newer. A
 * refund here and a refund by the request both go through cutout.refund, which gives a hold back once.
 */
export async function sweepOwnRows(conn: PgConnection, node: string, before: number, slots: string[], holds: string[]): Promise<ReconcileReport> {
  const gone = await conn.run('sweepOwnSlots', [node, before, slots]);
  const refunded = await conn.run<{ credits: string; free_call: boolean; ok: boolean }>('sweepOwnHolds', [node, before, holds]);
  const report: ReconcileReport = { holds: 0, credits: 0, freeCalls: 0, slots: gone.rowCount ?? 0 };
  for (const r of refunded.rows.filter((r) => r.ok)) {
    report.holds++;
    report.credits += Number(r.credits);
    if (r.free_call) report.freeCalls++;
  }
  return report;
}
