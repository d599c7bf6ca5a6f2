// Per-account concurrency slots on PostgreSQL: cutout.acquire_slot checks the cap and inserts under the
// account's row lock; a slot is this node's until released, or until its lease lapses.

import type { AccountView, Slot } from '../ledger.js';
import { nextId } from '../ids.js';
import type { PgNode } from './pg-node.js';

export async function acquireSlot(n: PgNode, account: AccountView): Promise<Slot | null> {
  // After an outage, the slots its failed requests left are given back first (recover), so they
  // never count against a new request: no 429 from requests that already ended.
  if (n.recovery.pass) await n.recovery.pass;
  const id = nextId();
  // Tracked from the start, so a renewal during a slow call covers it; when the call fails (the answer
  // may be lost after the insert) it leaves the set, and an insert that did land lapses and is swept.
  n.leases.slots.add(id);
  let ok = false;
  try {
    const { rows } = await n.conn.run<{ ok: boolean }>('acquireSlot', [account.id, id, n.node, account.concurrency, n.leaseMs, n.now()]);
    ok = rows[0]?.ok === true;
  } catch (err) {
    n.recovery.slots.set(id, Date.now()); // it may have landed: deleted once the database answers
    throw err;
  } finally {
    if (!ok) n.leases.slots.delete(id);
  }
  if (!ok) return null;
  let released: Promise<void> | null = null;
  return {
    release() {
      released ??= (async () => {
        n.leases.slots.delete(id);
        // A failed delete is retried every second until the database answers (and lapses anyway).
        await n.conn.run('releaseSlot', [id]).catch((err: Error) => {
          n.recovery.slots.set(id, Date.now());
          n.onError?.(err);
        });
      })();
      return released;
    },
  };
}
