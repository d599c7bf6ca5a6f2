// Admin views on PostgreSQL: usage per account since a time, and one account's requests in flight.

import type pg from 'pg';
import type { InFlight, UsageSummary } from '../ledger.js';

export async function summarizeUsage(pool: pg.Pool, sinceMs: number): Promise<UsageSummary[]> {
  const { rows } = await pool.query<{
    account_id: string;
    label: string | null;
    status: number;
    n: string;
    credits: string;
    free_calls: string;
    pixels: string;
  }>(
    `SELECT u.account_id, a.label, u.status, count(*) AS n, sum(u.credits) AS credits,
            count(*) FILTER (WHERE u.free_call) AS free_calls, sum(u.output_pixels) AS pixels
       FROM cutout.usage u LEFT JOIN cutout.accounts a ON a.id = u.account_id
      WHERE u.t >= $1 GROUP BY u.account_id, a.label, u.status`,
    [sinceMs],
  );
  const byAccount = new Map<string, UsageSummary & { pixels: number }>();
  for (const r of rows) {
    let s = byAccount.get(r.account_id);
    if (!s) {
      s = { accountId: r.account_id, label: r.label ?? '', requests: 0, credits: 0, freeCalls: 0, outputMegapixels: 0, statuses: {}, pixels: 0 };
      byAccount.set(r.account_id, s);
    }
    s.requests += Number(r.n);
    s.credits += Number(r.credits);
    s.freeCalls += Number(r.free_calls);
    s.pixels += Number(r.pixels);
    s.statuses[r.status] = Number(r.n);
  }
  return [...byAccount.values()]
    .map(({ pixels, ...s }) => ({ ...s, outputMegapixels: Math.round((pixels / 1e6) * 1000) / 1000 }))
    .sort((a, b) => a.accountId.localeCompare(b.accountId));
}

export async function inFlight(pool: pg.Pool, accountId: string): Promise<InFlight> {
  const { rows } = await pool.query<{ holds: string; owners: string[] }>(
    `SELECT (SELECT count(*) FROM cutout.holds WHERE account_id = $1) AS holds,
            ARRAY(SELECT owner FROM cutout.slots WHERE account_id = $1 AND expires_at >= clock_timestamp()) AS owners`,
    [accountId],
  );
  return { holds: Number(rows[0]!.holds), slotOwners: rows[0]!.owners };
}
