// Reserve / settle / refund on PostgreSQL. Each is one statement: cutout.reserve picks the offer and
// debits under the account's row lock, the settle turns the hold into a usage row durably, cutout.refund
// gives a hold back once. Calls whose answer was lost are left to the recovery (pg-recovery.ts).

import type { RequestedSize } from '../../domain/removal.js';
import { InsufficientCreditsError, LedgerUnavailableError, type AccountView, type Reservation, type UsageRecord } from '../ledger.js';
import { monthOf } from '../account-rules.js';
import { offersFor } from '../quote.js';
import { nextId } from '../ids.js';
import type { PgNode } from './pg-node.js';

export async function reserve(n: PgNode, account: AccountView, size: RequestedSize): Promise<Reservation> {
  const t = n.now();
  const offers = offersFor(size);
  const id = nextId();
  n.leases.holds.add(id);
  let held = false;
  try {
    const { rows } = await n.conn.run<{ o_size: string; o_credits: string; o_free_call: boolean }>('reserve', [
      account.id,
      id,
      n.node,
      n.leaseMs,
      t,
      monthOf(t),
      offers.map((o) => o.size),
      offers.map((o) => o.credits),
      offers.map((o) => o.freeCallOk),
      offers.map((o) => o.onlyIfPayable),
    ]);
    const r = rows[0];
    if (!r) throw new InsufficientCreditsError('Insufficient credits');
    held = true;
    return { id, accountId: account.id, size: r.o_size as (typeof offers)[number]['size'], credits: Number(r.o_credits), freeCall: r.o_free_call };
  } catch (err) {
    if (err instanceof LedgerUnavailableError) n.recovery.holds.set(id, Date.now()); // it may have landed: refunded once the database answers
    throw err;
  } finally {
    if (!held) n.leases.holds.delete(id);
  }
}

export async function settle(n: PgNode, reservation: Reservation, usage: UsageRecord): Promise<boolean> {
  // Durable before it resolves (the settle statement, pg-queries.ts); no row means the hold is gone
  // (lapsed and swept, or lost with a crashed database's last commits): nothing was charged, so no
  // result may go out.
  let rowCount: number | null;
  try {
    ({ rowCount } = await n.conn.run('settle', [reservation.id, n.now(), usage.outputPixels, usage.status]));
  } catch (err) {
    // Unanswered: it may still commit (a stalled database goes on, a lost connection's statement
    // runs). The request answers 503 without its result, so whatever lands is voided once the
    // database answers (retried for a lease, like the refunds).
    if (err instanceof LedgerUnavailableError) n.recovery.voids.set(reservation.id, Date.now());
    throw err;
  }
  n.leases.holds.delete(reservation.id);
  return rowCount === 1;
}

export async function refund(n: PgNode, reservation: Reservation): Promise<void> {
  // Untracked first: a failed refund is retried every second until the database answers (and
  // lapses anyway, for a sweep to refund exactly once). Never throws for an unavailable database.
  n.leases.holds.delete(reservation.id);
  await n.conn.run('refund', [reservation.id]).catch((err: unknown) => {
    if (!(err instanceof LedgerUnavailableError)) throw err;
    n.recovery.holds.set(reservation.id, Date.now());
    n.onError?.(err);
  });
}
