// The real pool and ledger for integration tests. Both modules exist now: a failure to start them
// is a test failure, never a skip.

import type { LedgerBackend } from '../../src/ledger/ledger.js';
import type { PoolOptions, RemovalPool } from '../../src/pool/pool-api.js';
import { openLmdbBackend } from '../../src/ledger/lmdb-backend.js';

const POOL_MODULE = '../../src/pool/pool.js';

export async function tryRealPool(opts: PoolOptions = { workers: 1 }): Promise<{ pool: RemovalPool } | { skip: string }> {
  const mod = (await import(POOL_MODULE)) as { createRemovalPool(o: PoolOptions): Promise<RemovalPool> };
  return { pool: await mod.createRemovalPool(opts) };
}

/** The LMDB ledger the server uses by default, in `dir`. */
export function realLedger(dir: string): LedgerBackend {
  return openLmdbBackend(dir);
}
