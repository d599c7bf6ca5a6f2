// The ledger on LMDB, synchronous: composes the per-concern modules over one root env. Every write is a
// short transactionSync (one LMDB write lock shared by all processes); reads reset the snapshot first so
// another process's commit (a revocation, a debit) is seen on the very next call. The async Ledger the
// service uses wraps this (lmdb-backend.ts); the tests and benches may use it directly.

import type {
  AccountSummary,
  AccountView,
  Balances,
  BalanceName,
  InFlight,
  NewAccount,
  RateDecision,
  RateState,
  ReconcileReport,
  Reservation,
  StorageUse,
  UsageRecord,
  UsageSummary,
} from './ledger.js';
import type { RequestedSize } from '../domain/removal.js';
import type { Durability } from '../domain/durability.js';
import { openLedgerDb } from './db.js';
import { addCredits, createAccount, listAccounts, resolveAccountId, revoke } from './accounts.js';
import { balancesOf, monthOf, viewOf } from './account-rules.js';
import { hashApiKey } from './key-hash.js';
import { refundHold, reserveCredits, settleHold, unsettleHold, type SettledHold } from './credits.js';
import { acquireSlot, type HeldSlot } from './slots.js';
import { peekRate, takeRate } from './rate.js';
import { summarizeUsage } from './usage.js';
import { reserveStorage, storageUsed, type HeldStorage } from './storage.js';
import { reconcileDeadOwners } from './reconcile.js';
import { ensureDemoKey } from './demo-key.js';

export interface LmdbLedgerOptions {
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

/** Every ledger operation, synchronous, plus close/flush (which wait on LMDB's threads). */
export interface LmdbLedger {
  readonly dir: string;
  /** What this process asked for when it opened the folder. */
  readonly durability: Durability;
  authenticate(apiKey: string): AccountView | null;
  balances(accountId: string): Balances;
  acquireSlot(account: AccountView): HeldSlot | null;
  takeRate(account: AccountView, units: number): RateDecision;
  peekRate(account: AccountView): RateState;
  /** Throws InsufficientCreditsError when short. */
  reserve(account: AccountView, size: RequestedSize): Reservation;
  /** The settle, and what undoes it (null when there was no hold: nothing changed). */
  settle(reservation: Reservation, usage: UsageRecord): SettledHold | null;
  /** Undo a settle whose result will not go out (its flush failed); the request then refunds the hold. */
  unsettle(settled: SettledHold): void;
  refund(reservation: Reservation): void;
  reserveStorage(account: AccountView, bytes: number, quotaBytes: number): HeldStorage;
  storageUsed(accountId: string): StorageUse;
  createAccount(spec: NewAccount): { account: AccountView; apiKey: string };
  resolveAccount(keyOrId: string): string | null;
  revoke(keyOrId: string): number;
  addCredits(accountId: string, amount: number, to?: BalanceName): Balances | null;
  listAccounts(): AccountSummary[];
  summarizeUsage(sinceMs: number): UsageSummary[];
  inFlight(accountId: string): InFlight;
  /** Refunds every hold and frees every slot whose owner process is dead (one transaction). */
  reconcile(): ReconcileReport;
  ensureDemoKey(): string | null;
  isOpen(): boolean;
  /** fsync everything committed so far. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function openLmdbLedger(dir: string, opts: LmdbLedgerOptions = {}): LmdbLedger {
  const db = openLedgerDb(dir, { durability: opts.durability, flushIntervalMs: opts.flushIntervalMs });
  const now = opts.now ?? Date.now;
  let open = true;

  const accountOf = (accountId: string) => {
    db.root.resetReadTxn();
    const account = db.accounts.get(accountId);
    if (!account) throw new Error(`Unknown account ${accountId}`);
    return account;
  };

  return {
    dir,
    durability: db.durability,

    authenticate(apiKey) {
      // Fresh snapshot: a revocation committed by another process applies to this very call.
      db.root.resetReadTxn();
      const key = db.keys.get(hashApiKey(apiKey));
      if (!key || key.revokedAt !== undefined) return null;
      const account = db.accounts.get(key.accountId);
      return account ? viewOf(account) : null;
    },
    balances: (accountId) => balancesOf(accountOf(accountId), monthOf(now())),
    acquireSlot(account) {
      const slot = acquireSlot(db, account, now());
      if (!slot) return null;
      // After close the slot dies with this process's token; a restart's reconcile frees it.
      return { release: () => open && slot.release() };
    },
    takeRate: (account, units) => takeRate(db, account, units, now()),
    peekRate: (account) => peekRate(db, account, now()),
    reserve: (account, size) => reserveCredits(db, account.id, size, now()),
    settle: (reservation, usage) => settleHold(db, reservation, usage, now()),
    unsettle: (settled) => unsettleHold(db, settled),
    refund(reservation) {
      refundHold(db, reservation.id);
    },
    reserveStorage: (account, bytes, quotaBytes) => reserveStorage(db, account, bytes, quotaBytes),
    storageUsed: (accountId) => storageUsed(db, accountId),

    createAccount(spec) {
      const { account, apiKey } = createAccount(db, spec, now());
      return { account: viewOf(account), apiKey };
    },
    resolveAccount: (keyOrId) => resolveAccountId(db, keyOrId),
    revoke: (keyOrId) => revoke(db, keyOrId, now()),
    addCredits: (accountId, amount, to = 'subscription') => addCredits(db, accountId, amount, to, now()),
    listAccounts: () => listAccounts(db, now()),
    summarizeUsage: (sinceMs) => summarizeUsage(db, sinceMs),
    inFlight(accountId) {
      db.root.resetReadTxn();
      let holds = 0;
      for (const { value } of db.holds.getRange({})) if (value.accountId === accountId) holds++;
      const slotOwners: string[] = [];
      for (const { value } of db.slots.getRange({ start: [accountId], end: [accountId, '\uffff'] })) slotOwners.push(String(value.owner.pid));
      return { holds, slotOwners };
    },
    reconcile: () => reconcileDeadOwners(db),
    ensureDemoKey: () => ensureDemoKey(db, now()),

    isOpen: () => open,
    flush: () => db.flush(),
    async close() {
      open = false;
      await db.close();
    },
  };
}
