// The Ledger on LMDB: composes the per-concern modules over one root env. Every write is a short
// transactionSync (one LMDB write lock shared by all processes); reads reset the snapshot first so
// another process's commit (a revocation, a debit) is seen on the very next call.

import type {
  AccountView,
  Balances,
  Ledger,
  RateDecision,
  RateState,
  Reservation,
  Slot,
  StorageDecision,
  StorageUse,
  UsageRecord,
} from './ledger.js';
import type { RequestedSize } from '../domain/removal.js';
import { openLedgerDb, type Durability, type LedgerDb } from './db.js';
import {
  addCredits,
  balancesOf,
  createAccount,
  listAccounts,
  monthOf,
  resolveAccountId,
  revoke,
  viewOf,
  type AccountRecord,
  type AccountSummary,
  type NewAccount,
} from './accounts.js';
import { hashApiKey } from './key-hash.js';
import { refundHold, reserveCredits, settleHold } from './credits.js';
import { acquireSlot } from './slots.js';
import { peekRate, takeRate } from './rate.js';
import { summarizeUsage, type UsageSummary } from './usage.js';
import { reserveStorage, storageUsed } from './storage.js';
import type { BalanceName } from './prices.js';

export interface LedgerOptions {
  /** Clock in unix ms (tests inject one). Default Date.now. */
  now?: () => number;
  /**
   * Default 'periodic' (no fsync per commit, background flush); 'fsync' flushes every commit. Processes
   * sharing a folder may differ (each commit follows its own process's setting); within one process the
   * first open of a folder decides (docs/ledger.md). 'relaxed' is the old name of 'periodic'.
   */
  durability?: Durability | 'relaxed';
  /** Background flush period for 'periodic', ms. Default 1000. */
  flushIntervalMs?: number;
}

/** The Ledger plus the admin operations the CLI and the server's startup use. */
export interface LmdbLedger extends Ledger {
  readonly dir: string;
  /** Internal handle for reconcile/demo-key/bench; not for the HTTP layer. */
  readonly db: LedgerDb;
  now(): number;
  createAccount(spec: NewAccount): { account: AccountView; apiKey: string };
  /** Key or account id → account id, or null. */
  resolveAccount(keyOrId: string): string | null;
  /** Revoke a key, or all keys of an account id; returns how many keys changed. */
  revoke(keyOrId: string): number;
  addCredits(accountId: string, amount: number, to?: BalanceName): Balances | null;
  listAccounts(): AccountSummary[];
  summarizeUsage(sinceMs: number): UsageSummary[];
  /** fsync everything committed so far. */
  flush(): Promise<void>;
}

export function openLedger(dir: string, opts: LedgerOptions = {}): LmdbLedger {
  const db = openLedgerDb(dir, { durability: opts.durability, flushIntervalMs: opts.flushIntervalMs });
  const now = opts.now ?? Date.now;
  let open = true;

  const accountOf = (accountId: string): AccountRecord => {
    db.root.resetReadTxn();
    const account = db.accounts.get(accountId);
    if (!account) throw new Error(`Unknown account ${accountId}`);
    return account;
  };

  return {
    dir,
    db,
    now,

    authenticate(apiKey: string): AccountView | null {
      // Fresh snapshot: a revocation committed by another process applies to this very call.
      db.root.resetReadTxn();
      const key = db.keys.get(hashApiKey(apiKey));
      if (!key || key.revokedAt !== undefined) return null;
      const account = db.accounts.get(key.accountId);
      return account ? viewOf(account) : null;
    },

    balances(accountId: string): Balances {
      return balancesOf(accountOf(accountId), monthOf(now()));
    },

    acquireSlot(account: AccountView): Slot | null {
      const slot = acquireSlot(db, account, now());
      if (!slot) return null;
      // After close the slot dies with this process's token; a restart's reconcile frees it.
      return { release: () => open && slot.release() };
    },

    takeRate(account: AccountView, units: number): RateDecision {
      return takeRate(db, account, units, now());
    },

    peekRate(account: AccountView): RateState {
      return peekRate(db, account, now());
    },

    async reserve(account: AccountView, size: RequestedSize): Promise<Reservation> {
      return reserveCredits(db, account.id, size, now());
    },

    async settle(reservation: Reservation, usage: UsageRecord): Promise<void> {
      settleHold(db, reservation, usage, now());
    },

    async refund(reservation: Reservation): Promise<void> {
      refundHold(db, reservation.id);
    },

    reserveStorage(account: AccountView, bytes: number, quotaBytes: number): StorageDecision {
      return reserveStorage(db, account, bytes, quotaBytes);
    },

    storageUsed(accountId: string): StorageUse {
      return storageUsed(db, accountId);
    },

    isOpen: () => open,

    async close(): Promise<void> {
      open = false;
      await db.close();
    },

    createAccount(spec: NewAccount) {
      const { account, apiKey } = createAccount(db, spec, now());
      return { account: viewOf(account), apiKey };
    },
    resolveAccount: (keyOrId) => resolveAccountId(db, keyOrId),
    revoke: (keyOrId) => revoke(db, keyOrId, now()),
    addCredits: (accountId, amount, to = 'subscription') => addCredits(db, accountId, amount, to, now()),
    listAccounts: () => listAccounts(db, now()),
    summarizeUsage: (sinceMs) => summarizeUsage(db, sinceMs),
    flush: () => db.flush(),
  };
}

export { reconcileDeadOwners, type ReconcileReport } from './reconcile.js';
export { ensureDemoKey } from './demo-key.js';
