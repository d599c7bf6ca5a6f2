// Accounts and keys on PostgreSQL: the request path's key lookup (a prepared statement, no cache) and the
// admin operations, each one statement on the pool.

import type pg from 'pg';
import type { AccountSummary, AccountView, Balances, BalanceName, NewAccount } from '../ledger.js';
import type { AccountRecord } from '../records.js';
import { balanceLimitError, balancesOf, checkCreditAmount, MAX_BALANCE, monthOf, newAccountRecord, summaryOf, viewOf } from '../account-rules.js';
import { generateApiKey, hashApiKey, looksLikeApiKey } from '../key-hash.js';
import type { PgConnection } from './pg-connection.js';
import { recordOf, type AccountRow } from './pg-queries.js';

export async function authenticate(conn: PgConnection, apiKey: string): Promise<AccountView | null> {
  // No cache: a revocation committed by any node applies to the very next request on every node.
  const { rows } = await conn.run<AccountRow>('authenticate', [hashApiKey(apiKey)]);
  return rows[0] ? viewOf(recordOf(rows[0])) : null;
}

export async function balances(conn: PgConnection, accountId: string, now: () => number): Promise<Balances> {
  const { rows } = await conn.run<AccountRow>('account', [accountId]);
  if (!rows[0]) throw new Error(`Unknown account ${accountId}`);
  return balancesOf(recordOf(rows[0]), monthOf(now()));
}

/** Inserts the account and its key; with `onlyIfEmpty`, only into a ledger without accounts. True when inserted. */
export async function insertAccount(client: pg.PoolClient | pg.Pool, a: AccountRecord, hash: string, onlyIfEmpty: boolean): Promise<boolean> {
  const { rowCount } = await client.query(
    `WITH a AS (
       INSERT INTO cutout.accounts (id, label, subscription, payg, enterprise, free_calls_per_month, free_calls_used, free_month, concurrency, rate_per_minute, created_at)
       SELECT $1, $2, $3, $4, $5, $6, 0, $7, $8, $9, $10 WHERE NOT $12 OR NOT EXISTS (SELECT 1 FROM cutout.accounts)
       RETURNING id)
     INSERT INTO cutout.keys (hash, account_id, created_at) SELECT $11, a.id, $10 FROM a`,
    [a.id, a.label, a.subscription, a.payg, a.enterprise, a.freeCallsPerMonth, a.freeMonth, a.concurrency, a.ratePerMinute, a.createdAt, hash, onlyIfEmpty],
  );
  return rowCount === 1;
}

export async function createAccount(pool: pg.Pool, spec: NewAccount, now: () => number): Promise<{ account: AccountView; apiKey: string }> {
  const account = newAccountRecord(spec, now());
  const apiKey = generateApiKey();
  await insertAccount(pool, account, hashApiKey(apiKey), false);
  return { account: viewOf(account), apiKey };
}

export async function resolveAccount(pool: pg.Pool, keyOrId: string): Promise<string | null> {
  const { rows } = looksLikeApiKey(keyOrId)
    ? await pool.query<{ id: string }>('SELECT account_id AS id FROM cutout.keys WHERE hash = $1', [hashApiKey(keyOrId)])
    : await pool.query<{ id: string }>('SELECT id FROM cutout.accounts WHERE id = $1', [keyOrId]);
  return rows[0]?.id ?? null;
}

export async function revoke(pool: pg.Pool, keyOrId: string, now: () => number): Promise<number> {
  const { rowCount } = looksLikeApiKey(keyOrId)
    ? await pool.query('UPDATE cutout.keys SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL', [hashApiKey(keyOrId), now()])
    : await pool.query('UPDATE cutout.keys SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL', [keyOrId, now()]);
  return rowCount ?? 0;
}

export async function addCredits(pool: pg.Pool, accountId: string, amount: number, to: BalanceName, now: () => number): Promise<Balances | null> {
  checkCreditAmount(amount, to);
  // `to` is one of three column names (checked above), never user text in the SQL.
  const { rows } = await pool.query<AccountRow>(
    `UPDATE cutout.accounts SET ${to} = ${to} + $2 WHERE id = $1 AND subscription + payg + enterprise + $2 <= $3 RETURNING *`,
    [accountId, amount, MAX_BALANCE],
  );
  if (rows[0]) return balancesOf(recordOf(rows[0]), monthOf(now()));
  const { rows: found } = await pool.query<{ total: string }>('SELECT subscription + payg + enterprise AS total FROM cutout.accounts WHERE id = $1', [
    accountId,
  ]);
  if (!found[0]) return null;
  throw balanceLimitError(`Adding ${amount} to ${to}`, BigInt(found[0].total) + BigInt(amount));
}

export async function listAccounts(pool: pg.Pool, now: () => number): Promise<AccountSummary[]> {
  const { rows } = await pool.query<AccountRow & { revoked: boolean }>(
    `SELECT a.*, count(k.hash) > 0 AND bool_and(k.revoked_at IS NOT NULL) AS revoked
       FROM cutout.accounts a LEFT JOIN cutout.keys k ON k.account_id = a.id
      GROUP BY a.id ORDER BY a.created_at, a.id`,
  );
  const month = monthOf(now());
  return rows.map((r) => summaryOf(recordOf(r), month, r.revoked));
}
