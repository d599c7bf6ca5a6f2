// The append-only usage log on LMDB (one entry per settled request) and its per-account summary.

import type { UsageSummary } from './ledger.js';
import type { LedgerDb } from './db.js';
import type { UsageEntry } from './records.js';

/** Must run inside a write transaction. Keyed by time + reservation id: ordered and never colliding. */
export function appendUsage(db: LedgerDb, reservationId: string, entry: UsageEntry): void {
  db.usage.putSync([entry.t, reservationId], entry);
}

export function* usageSince(db: LedgerDb, sinceMs: number): Generator<UsageEntry> {
  db.root.resetReadTxn();
  for (const { value } of db.usage.getRange({ start: [sinceMs] })) yield value;
}

export function summarizeUsage(db: LedgerDb, sinceMs: number): UsageSummary[] {
  const byAccount = new Map<string, UsageSummary>();
  for (const e of usageSince(db, sinceMs)) {
    let s = byAccount.get(e.accountId);
    if (!s) {
      s = { accountId: e.accountId, label: '', requests: 0, credits: 0, freeCalls: 0, outputMegapixels: 0, statuses: {} };
      byAccount.set(e.accountId, s);
    }
    s.requests++;
    s.credits += e.credits;
    if (e.freeCall) s.freeCalls++;
    s.outputMegapixels += e.outputPixels / 1e6;
    s.statuses[e.status] = (s.statuses[e.status] ?? 0) + 1;
  }
  for (const s of byAccount.values()) {
    s.label = db.accounts.get(s.accountId)?.label ?? '';
    s.outputMegapixels = Math.round(s.outputMegapixels * 1000) / 1000;
  }
  return [...byAccount.values()].sort((a, b) => a.accountId.localeCompare(b.accountId));
}
