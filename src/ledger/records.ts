// The records the LMDB ledger stores, in one place: db.ts types its sub-databases with them and the
// modules that read and write them import them from here (no import circle through db.ts).

import type { SizeTier } from '../domain/removal.js';
import type { StorageUse } from './ledger.js';
import type { Owner } from './owner.js';
import type { BalanceName } from './prices.js';

export interface KeyRecord {
  accountId: string;
  createdAt: number;
  /** Unix ms; absent while the key is valid. */
  revokedAt?: number;
}

export interface AccountRecord {
  id: string;
  label: string;
  subscription: number;
  payg: number;
  enterprise: number;
  freeCallsPerMonth: number;
  /** Free calls used (held or settled) in `freeMonth`; a different month means none used yet. */
  freeCallsUsed: number;
  /** `YYYY-MM` (UTC) that `freeCallsUsed` counts. */
  freeMonth: string;
  concurrency: number;
  ratePerMinute: number;
  createdAt: number;
}

/** Credits a hold took from each balance, so a refund puts each back where it came from. */
export type Draws = Record<BalanceName, number>;

export interface HoldRecord {
  accountId: string;
  size: SizeTier;
  credits: number;
  draws: Draws;
  /** Month whose free-call counter this hold incremented; absent when no free call was used. */
  freeMonth?: string;
  owner: Owner;
  createdAt: number;
}

export interface SlotRecord {
  owner: Owner;
  createdAt: number;
}

export interface RateRecord {
  /** Window start, unix seconds. */
  window: number;
  used: number;
}

export interface UsageEntry {
  /** Unix ms at settle. */
  t: number;
  accountId: string;
  size: SizeTier;
  credits: number;
  freeCall: boolean;
  outputPixels: number;
  status: number;
}

/** Improve uploads one account has stored. */
export type StorageRecord = StorageUse;
