// The one interface between the HTTP layer and the account store (keys, credits, slots, rate limits,
// improve storage).
// The HTTP layer (api/) depends only on this file; ledger/*.ts implements it on LMDB.

import type { RequestedSize, SizeTier } from '../domain/removal.js';

export interface AccountView {
  /** Stable account id (never the key). */
  id: string;
  label: string;
  /** Concurrency cap: in-flight removals at once. */
  concurrency: number;
  /** Per-minute limit in megapixel units. */
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

export type RateDecision =
  | ({ ok: true } & RateState)
  | ({ ok: false; retryAfter: number } & RateState);

/** A held concurrency slot. `release()` is idempotent. */
export interface Slot {
  release(): void;
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
export type StorageDecision = { ok: true; release(): void } | { ok: false; usedBytes: number };

export class InsufficientCreditsError extends Error {
  readonly code = 'insufficient_credits';
}

export interface Ledger {
  /** Synchronous: key → account, or null when unknown or revoked. */
  authenticate(apiKey: string): AccountView | null;
  /** Synchronous balances read (fresh across processes). */
  balances(accountId: string): Balances;
  /** Take a concurrency slot or return null when the account is at its cap. */
  acquireSlot(account: AccountView): Slot | null;
  /** Charge `units` megapixel units against the per-minute limit; `ok:false` when over. Units are never negative. */
  takeRate(account: AccountView, units: number): RateDecision;
  /** Current rate state without charging (for headers on errors). */
  peekRate(account: AccountView): RateState;
  /** Atomically hold credits / a free call. Rejects with InsufficientCreditsError when short. */
  reserve(account: AccountView, size: RequestedSize): Promise<Reservation>;
  /** Make the hold final and append a usage record. Idempotent per reservation. */
  settle(reservation: Reservation, usage: UsageRecord): Promise<void>;
  /** Give the hold back (error, abort, disconnect). Idempotent per reservation. */
  refund(reservation: Reservation): Promise<void>;
  /** Count one improve upload of `bytes` against the account's quota; refused when it would pass `quotaBytes`. */
  reserveStorage(account: AccountView, bytes: number, quotaBytes: number): StorageDecision;
  /** Improve storage the account uses (fresh across processes). */
  storageUsed(accountId: string): StorageUse;
  /** True while the underlying database is open. */
  isOpen(): boolean;
  close(): Promise<void>;
}
