// Refunds holds and frees slots whose owner process is gone (kill -9, OOM, crash). Run at every server start
// and from a supervisor when a child dies. Safe to run any time from any process: live owners are untouched.

import type { ReconcileReport } from './ledger.js';
import type { LedgerDb } from './db.js';
import { undoHold } from './credits.js';
import { isOwnerAlive, type Owner } from './owner.js';

export function reconcileDeadOwners(db: LedgerDb): ReconcileReport {
  const report: ReconcileReport = { holds: 0, credits: 0, freeCalls: 0, slots: 0 };
  // One check per distinct owner: each is a /proc read.
  const alive = new Map<string, boolean>();
  const isAlive = (o: Owner): boolean => {
    const k = `${o.pid}/${o.token}`;
    let v = alive.get(k);
    if (v === undefined) {
      v = isOwnerAlive(o);
      alive.set(k, v);
    }
    return v;
  };
  db.write(() => {
    // Collect first: deleting under an open cursor is not safe.
    for (const { key, value } of [...db.holds.getRange({})]) {
      if (isAlive(value.owner)) continue;
      const hold = undoHold(db, key);
      if (!hold) continue;
      report.holds++;
      report.credits += hold.credits;
      if (hold.freeMonth !== undefined) report.freeCalls++;
    }
    for (const { key, value } of [...db.slots.getRange({})]) {
      if (isAlive(value.owner)) continue;
      db.slots.removeSync(key);
      report.slots++;
    }
  }, 'give');
  return report;
}
