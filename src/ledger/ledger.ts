// The one interface between the service and the account store (keys, credits, slots, rate limits,
// improve storage, usage), with two backends: LMDB in the data folder (lmdb-ledger.ts, the default) and
// PostgreSQL shared by many nodes (pg/pg-ledger.ts). The api/ layer depends only on this file.
//
// Every method is async because PostgreSQL waits on the network. The LMDB backend answers
// synchronously underneath (its modules say so in their signatures); lmdb-backend.ts only wraps it.

import type { RequestedSize, SizeTier } from '../domain/removal.js';
import type { BalanceName } from './prices.js';

export interface AccountView {
  /** Stable account id (never the key). */
  id: string;
  label: string;
  /** Concurrency cap: in-flight removals at once, across every process and node. */
  concurrency: number;
  /** Per-minute limit in megapixel units, across every process and node. */
  ratePerMinute: number;
}

export interface Balances {
  subscription: number;
  payg: number;
  enterprise: number;
  /** subscription + payg + enterprise */
  total: number;
  /** Free calls left this calendar month (UTC). */
  freeCalls: number;
}

export interface RateState {
  limit: number;
  remaining: number;
  /** Unix seconds when the current window resets. */
  reset: number;
}

export type RateDecision = ({ ok: true } & RateState) | ({ ok: false; retryAfter: number } & RateState);

/** A held concurrency slot. `release()` is idempotent; it resolves once other nodes can take the slot. */
export interface Slot {
  release(): Promise<void>;
}

export interface Reservation {
  id: string;
  accountId: string;
  /** The tier this request is allowed to produce (auto resolved: full if payable, else preview). */
  size: SizeTier;
  /** Integer credits held (0 when a free call covers it). */
  credits: number;
  /** True when a free call is held instead of credits. */
  freeCall: boolean;
}

export interface UsageRecord {
  /** Output pixels actually produced. */
  outputPixels: number;
  status: number;
}

/** Improve uploads an account has stored. */
export interface StorageUse {
  bytes: number;
  files: number;
}

/** Taken (release() gives the bytes back when the upload could not be stored; idempotent) or refused. */
export type StorageDecision = { ok: true; release(): Promise<void> } | { ok: false; usedBytes: number };

export class InsufficientCreditsError extends Error {
  readonly code = 'insufficient_credits';
}

/**
 * The ledger's database cannot be reached or cannot complete a call within the bounded wait (refused,
 * timed out, a statement cancelled, a connection lost mid-call; LMDB: a disk full or failing). The
 * request path answers it with 503 `ledger_unavailable` + Retry-After (api/errors.ts).
 */
export class LedgerUnavailableError extends Error {
  readonly code = 'ledger_unavailable';
}

export function isLedgerUnavailable(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ledger_unavailable';
}

/** A bad admin input (negative credits, a zero cap); nothing was written. */
export class LedgerInputError extends Error {
  readonly code: string = 'invalid_ledger_input';
}

/** A change refused because a balance would no longer be an exact integer; nothing was written. */
export class BalanceLimitError extends LedgerInputError {
  override readonly code = 'balance_limit';
}

/** What the request path uses. */
export interface Ledger {
  /** Key → account, or null when unknown or revoked (a revocation applies to the very next call). */
  authenticate(apiKey: string): Promise<AccountView | null>;
  /** Balances as they are now. */
  balances(accountId: string): Promise<Balances>;
  /** Take a concurrency slot, or null when the account is at its cap. */
  acquireSlot(account: AccountView): Promise<Slot | null>;
  /** Charge `units` megapixel units against the per-minute limit; `ok:false` when over. Units are never negative. */
  takeRate(account: AccountView, units: number): Promise<RateDecision>;
  /** Current rate state without charging (for headers on errors). */
  peekRate(account: AccountView): Promise<RateState>;
  /** Atomically hold credits / a free call. Rejects with InsufficientCreditsError when short. */
  reserve(account: AccountView, size: RequestedSize): Promise<Reservation>;
  /**
   * Make the hold final and append a usage record, durably before it resolves. Idempotent per reservation.
   * PostgreSQL resolves `false` when this call found no hold (settled or refunded before, or lapsed and
   * swept, or lost with a crashed database's unflushed commits): nothing was charged by it.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: LMDB's settle resolves nothing, PostgreSQL's a boolean.
  settle(reservation: Reservation, usage: UsageRecord): Promise<boolean | void>;
  /** Give the hold back (error, abort, disconnect). Idempotent per reservation. */
  refund(reservation: Reservation): Promise<void>;
  /** Count one improve upload of `bytes` against the account's quota; refused when it would pass `quotaBytes`. */
  reserveStorage(account: AccountView, bytes: number, quotaBytes: number): Promise<StorageDecision>;
  /** Improve storage the account uses. */
  storageUsed(accountId: string): Promise<StorageUse>;
  /** True while the underlying database is open. */
  isOpen(): boolean;
  close(): Promise<void>;
}

export interface NewAccount {
  label?: string;
  subscription?: number;
  payg?: number;
  enterprise?: number;
  freeCallsPerMonth?: number;
  concurrency?: number;
  ratePerMinute?: number;
}

export interface AccountSummary extends AccountView {
  balances: Balances;
  /** Every key of the account is revoked. */
  revoked: boolean;
  createdAt: number;
}

export interface UsageSummary {
  accountId: string;
  label: string;
  requests: number;
  credits: number;
  freeCalls: number;
  outputMegapixels: number;
  /** HTTP status → count. */
  statuses: Record<string, number>;
}

/** What a reconciliation gave back: holds and slots whose owner is gone (dead process, lapsed lease). */
export interface ReconcileReport {
  /** Holds refunded. */
  holds: number;
  /** Credits put back, all balances together. */
  credits: number;
  /** Refunded holds that had used a free call. */
  freeCalls: number;
  /** Concurrency slots freed. */
  slots: number;
}

/** Requests of one account in flight right now: its holds, and the owners of its slots. */
export interface InFlight {
  holds: number;
  /** One entry per slot: the owning process (LMDB: its pid) or node (PostgreSQL: its node id). */
  slotOwners: string[];
}

export type { BalanceName } from './prices.js';

/** The admin side: the `keys`/`usage` commands, the server's start-up, tests and benches. */
export interface LedgerAdmin {
  /** Creates an account with one key; the only time the key exists in plain text. */
  createAccount(spec: NewAccount): Promise<{ account: AccountView; apiKey: string }>;
  /** Key or account id → account id, or null. */
  resolveAccount(keyOrId: string): Promise<string | null>;
  /** Revoke a key, or all keys of an account id; resolves with how many keys changed. */
  revoke(keyOrId: string): Promise<number>;
  /** Adds credits to one balance; the new balances, or null for an unknown account. Throws BalanceLimitError. */
  addCredits(accountId: string, amount: number, to?: BalanceName): Promise<Balances | null>;
  listAccounts(): Promise<AccountSummary[]>;
  summarizeUsage(sinceMs: number): Promise<UsageSummary[]>;
  inFlight(accountId: string): Promise<InFlight>;
  /** Refund holds and free slots whose owner is gone. Safe any time, from any process or node. */
  reconcile(): Promise<ReconcileReport>;
  /** On an empty ledger, creates the demo account and returns its key (once); otherwise null. */
  ensureDemoKey(): Promise<string | null>;
}

/** Both sides: what opening a ledger gives. */
export interface LedgerBackend extends Ledger, LedgerAdmin {
  /** `lmdb` or `postgres`, and where (a folder, or the database URL without its password). */
  readonly kind: 'lmdb' | 'postgres';
  readonly location: string;
}
