// The demo account on a PostgreSQL ledger without accounts: made once, whichever node starts first.

import type pg from 'pg';
import { newAccountRecord } from '../account-rules.js';
import { generateApiKey, hashApiKey } from '../key-hash.js';
import { DEMO_ACCOUNT } from '../prices.js';
import { insertAccount } from './pg-accounts.js';

/** pg_advisory_xact_lock key for the demo account ('cutout-d'). */
const DEMO_LOCK = 0x6375746f75742d64n.toString();

/** The demo account's key when this call made it (shown once), else null. */
export async function ensureDemoKey(pool: pg.Pool, now: () => number): Promise<string | null> {
  const account = newAccountRecord(DEMO_ACCOUNT, now());
  const apiKey = generateApiKey();
  const client = await pool.connect();
  try {
    // Nodes starting together on an empty database make one demo account: the lock orders them.
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [DEMO_LOCK]);
    const made = await insertAccount(client, account, hashApiKey(apiKey), true);
    await client.query('COMMIT');
    return made ? apiKey : null;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
