// First start with an empty data folder: make a demo account so the server works out of the box.

import { insertAccount } from './accounts.js';
import { openLedger, type LmdbLedger } from './lmdb-ledger.js';
import { DEMO_CREDITS, DEMO_FREE_CALLS } from './prices.js';

/**
 * Creates the demo account and returns its key (to print once), or null when the folder already has
 * accounts. The emptiness check and the insert share one transaction, so racing processes make one.
 */
export async function ensureDemoKey(target: LmdbLedger | string): Promise<string | null> {
  const ledger = typeof target === 'string' ? openLedger(target) : target;
  try {
    const { db } = ledger;
    return db.root.transactionSync(() => {
      if (db.accounts.getKeysCount({ limit: 1 }) > 0) return null;
      const spec = { label: 'demo', subscription: DEMO_CREDITS, freeCallsPerMonth: DEMO_FREE_CALLS };
      return insertAccount(db, spec, ledger.now()).apiKey;
    });
  } finally {
    if (typeof target === 'string') await ledger.close();
  }
}
