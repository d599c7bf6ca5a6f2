// The Ledger on PostgreSQL, shared by every node. Each operation is one round trip: a prepared statement
// or one of the functions in migrations.ts, which check and write inside the database under row locks;
// no JS code reads a balance and writes it back, and no transaction stays open across an inference.
// Loaded only when a postgres:// URL is configured (open-ledger.ts imports it dynamically). This file
// composes the per-concern modules: pg-connection (pool, migrations, the bounded call), pg-accounts and
// pg-demo-key (keys), pg-credits (reserve / settle / refund), pg-slots, pg-rate, pg-storage, pg-usage,
// pg-leases + pg-reconcile (this node's leases, lapsed ones of any node) and pg-recovery (after an outage).

import { hostname } from 'node:os';
import type { LedgerBackend, ReconcileReport } from '../ledger.js';
import type { Durability } from '../../domain/durability.js';
import { randomBase62 } from '../ids.js';
import { connectPg } from './pg-connection.js';
import { LeaseKeeper } from './pg-leases.js';
import { Recovery } from './pg-recovery.js';
import { reap } from './pg-reconcile.js';
import type { PgNode } from './pg-node.js';
import { addCredits, authenticate, balances, createAccount, listAccounts, resolveAccount, revoke } from './pg-accounts.js';
import { ensureDemoKey } from './pg-demo-key.js';
import { acquireSlot } from './pg-slots.js';
import { refund, reserve, settle } from './pg-credits.js';
import { peekRate, takeRate } from './pg-rate.js';
import { reserveStorage, storageUsed } from './pg-storage.js';
import { inFlight, summarizeUsage } from './pg-usage.js';

export interface PgLedgerOptions {
  /** Clock for months, rate windows and usage times, unix ms (tests inject one). Leases use the database's clock. */
  now?: (() => number) | undefined;
  /** `periodic` (default): synchronous_commit off, a commit reaches the disk within ~0.6 s; `fsync`: on. */
  durability?: Durability | undefined;
  /** Lease of this node's slots and holds, ms; renewed every third of it. Default 30 s. */
  leaseMs?: number | undefined;
  /** Connections in the pool. Default 10. */
  maxConnections?: number | undefined;
  /** How long to wait for the database at start and for a connection later, ms. Default 3000. */
  connectTimeoutMs?: number | undefined;
  /**
   * The request path's bounded wait for one call, ms (a connection and the statement's answer each):
   * past it the call fails with LedgerUnavailableError (503 `ledger_unavailable`). Default 3000.
   */
  waitMs?: number | undefined;
  /** Names this node in the slots and holds it owns. Default `<host>/<pid>/<random>`. */
  nodeId?: string | undefined;
  onReconcile?: ((report: ReconcileReport) => void) | undefined;
  onError?: ((err: Error) => void) | undefined;
}

/** Opens the pool, checks the database answers, applies migrations, starts this node's lease keeper. */
export async function openPgLedger(url: string, opts: PgLedgerOptions = {}): Promise<LedgerBackend> {
  const now = opts.now ?? Date.now;
  const leaseMs = opts.leaseMs ?? 30_000;
  const node = opts.nodeId ?? `${hostname()}/${process.pid}/${randomBase62(6)}`;
  const conn = await connectPg(url, opts);
  const leases = new LeaseKeeper(
    {
      renew: async (holds, slots) => void (await conn.run('renew', [holds, slots, leaseMs])),
      reap: () => reap(conn),
    },
    { leaseMs, onReconcile: opts.onReconcile, onError: opts.onError },
  );
  const recovery = new Recovery(conn, leases, { node, leaseMs, now, onReconcile: opts.onReconcile });
  conn.watcher = recovery;
  const n: PgNode = { conn, leases, recovery, node, leaseMs, now, onError: opts.onError };
  const pool = conn.pool;

  return {
    kind: 'postgres',
    location: conn.shown,

    authenticate: (apiKey) => authenticate(conn, apiKey),
    balances: (accountId) => balances(conn, accountId, now),
    acquireSlot: (account) => acquireSlot(n, account),
    takeRate: (account, units) => takeRate(conn, account, units, now()),
    peekRate: (account) => peekRate(conn, account, now()),
    reserve: (account, size) => reserve(n, account, size),
    settle: (reservation, usage) => settle(n, reservation, usage),
    refund: (reservation) => refund(n, reservation),
    reserveStorage: (account, bytes, quotaBytes) => reserveStorage(conn, account, bytes, quotaBytes),
    storageUsed: (accountId) => storageUsed(conn, accountId),

    isOpen: () => conn.open && leases.healthy && conn.available,

    async close() {
      if (!conn.open) return;
      await recovery.stop();
      conn.open = false;
      await leases.stop();
      // A drained server owns nothing; after a forced stop, give back now rather than at lease end.
      await Promise.all([...leases.holds].map((id) => conn.run('refund', [id]).catch(() => {})));
      await Promise.all([...leases.slots].map((id) => conn.run('releaseSlot', [id]).catch(() => {})));
      await conn.end();
    },

    createAccount: (spec) => createAccount(pool, spec, now),
    resolveAccount: (keyOrId) => resolveAccount(pool, keyOrId),
    revoke: (keyOrId) => revoke(pool, keyOrId, now),
    addCredits: (accountId, amount, to = 'subscription') => addCredits(pool, accountId, amount, to, now),
    listAccounts: () => listAccounts(pool, now),
    summarizeUsage: (sinceMs) => summarizeUsage(pool, sinceMs),
    inFlight: (accountId) => inFlight(pool, accountId),
    reconcile: () => reap(conn),
    ensureDemoKey: () => ensureDemoKey(pool, now),
  };
}
