// First start with an empty data folder: make a demo account so the server works out of the box.

import type { LedgerDb } from './db.js';
import { insertAccount } from './accounts.js';
import { DEMO_ACCOUNT } from './prices.js';

/**
 * Creates the demo account and returns its key (to print once), or null when the folder already has
 * accounts. The emptiness check and the insert share one transaction, so racing processes make one.
 */
export function ensureDemoKey(db: LedgerDb, now: number): string | null {
  return db.write(() => {
    if (db.accounts.getKeysCount({ limit: 1 }) > 0) return null;
    return insertAccount(db, DEMO_ACCOUNT, now).apiKey;
  });
}
