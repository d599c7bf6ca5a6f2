// The real pool and ledger for integration tests. Both modules exist now: a failure to start them
// is a test failure, never a skip.

import type { Ledger } from '../../src/ledger/ledger.js';
import type { PoolOptions, RemovalPool } from '../../src/pool/pool-api.js';

const POOL_MODULE = '../../src/pool/pool.js';
const LEDGER_MODULE = '../../src/ledger/lmdb-ledger.js';

export async function tryRealPool(opts: PoolOptions = { workers: 1 }): Promise<{ pool: RemovalPool } | { skip: string }> {
  const mod = (await import(POOL_MODULE)) as { createRemovalPool(o: PoolOptions): Promise<RemovalPool> };
  return { pool: await mod.createRemovalPool(opts) };
}

export type RealLedger = Ledger & {
  ensureDemoKey?: () => unknown;
  reconcileDeadOwners?: () => unknown;
  [k: string]: unknown;
};

export async function tryRealLedger(dir: string): Promise<{ ledger: RealLedger; module: Record<string, unknown> } | { skip: string }> {
  const mod = (await import(LEDGER_MODULE)) as { openLedger(dir: string): RealLedger | Promise<RealLedger> };
  return { ledger: await mod.openLedger(dir), module: mod as unknown as Record<string, unknown> };
}
