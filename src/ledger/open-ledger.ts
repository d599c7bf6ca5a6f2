// Opens the configured ledger: LMDB in the data folder unless a postgres:// URL is given. The PostgreSQL
// client is imported only then, so the default LMDB server never loads it (memory, start-up time).

import { mkdir } from 'node:fs/promises';
import type { LedgerBackend, ReconcileReport } from './ledger.js';
import type { Durability } from '../domain/durability.js';
import { openLmdbBackend } from './lmdb-backend.js';

export interface LedgerTarget {
  /** postgres://… (checked by parseLedgerUrl); undefined = LMDB in `dataDir`. */
  url?: string | undefined;
  dataDir: string;
  durability?: Durability | undefined;
  /** PostgreSQL: lease of this node's slots and holds, ms (renewed every third of it). */
  leaseMs?: number | undefined;
  /** PostgreSQL: what a periodic sweep gave back from nodes whose leases lapsed (for the log). */
  onReconcile?: ((report: ReconcileReport) => void) | undefined;
  /** PostgreSQL: a background renewal or sweep failed (the database was unreachable, say). */
  onError?: ((err: Error) => void) | undefined;
}

export async function openLedger(target: LedgerTarget): Promise<LedgerBackend> {
  if (target.url) {
    const { openPgLedger } = await import('./pg/pg-ledger.js');
    return openPgLedger(target.url, {
      durability: target.durability,
      leaseMs: target.leaseMs,
      onReconcile: target.onReconcile,
      onError: target.onError,
    });
  }
  await mkdir(target.dataDir, { recursive: true });
  return openLmdbBackend(target.dataDir, target.durability ? { durability: target.durability } : {});
}
