// Account and key records, the monthly free-call allowance, and the admin operations on them.

import type { AccountView, Balances } from './ledger.js';
import type { LedgerDb } from './db.js';
import { generateApiKey, hashApiKey, looksLikeApiKey, randomBase62 } from './key-hash.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_FREE_CALLS_PER_MONTH,
  DEFAULT_RATE_PER_MINUTE,
  SPEND_ORDER,
  type BalanceName,
} from './prices.js';

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

export class LedgerInputError extends Error {
  readonly code: string = 'invalid_ledger_input';
}

/** A change refused because a balance would no longer be an exact integer; nothing was written. */
export class BalanceLimitError extends LedgerInputError {
  override readonly code = 'balance_limit';
}

/** Largest total credits an account may hold: past it, a JS number no longer counts single credits. */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

/**
 * The one balance-limit check: after adding `amount`, the three balances together (and so each one)
 * stay exact integers. Counted in BigInt so the check itself cannot round.
 */
function checkBalanceLimit(account: Pick<AccountRecord, 'subscription' | 'payg' | 'enterprise'>, amount: number, change: string): void {
  const total = BigInt(account.subscription) + BigInt(account.payg) + BigInt(account.enterprise) + BigInt(amount);
  if (total > BigInt(MAX_BALANCE)) {
    throw new BalanceLimitError(
      `${change} would bring the account's total to ${total} credits, past the largest exact balance ${MAX_BALANCE} (Number.MAX_SAFE_INTEGER); nothing was changed`,
    );
  }
}

/** Calendar month in UTC, e.g. `2025-07`: free calls reset when this changes. */
export function monthOf(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function freeCallsLeft(account: AccountRecord, month: string): number {
  const used = account.freeMonth === month ? account.freeCallsUsed : 0;
  return Math.max(0, account.freeCallsPerMonth - used);
}

export function balancesOf(account: AccountRecord, month: string): Balances {
  return {
    subscription: account.subscription,
    payg: account.payg,
    enterprise: account.enterprise,
    total: account.subscription + account.payg + account.enterprise,
    freeCalls: freeCallsLeft(account, month),
  };
}

export function viewOf(account: AccountRecord): AccountView {
  return { id: account.id, label: account.label, concurrency: account.concurrency, ratePerMinute: account.ratePerMinute };
}

function requireCount(name: string, value: number | undefined, fallback: number, min = 0): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) {
    throw new LedgerInputError(`Expected an integer >= ${min} for ${name} but received ${String(value)}`);
  }
  return v;
}

/** Creates an account with one key inside the caller's write transaction; returns the key (shown once). */
export function insertAccount(db: LedgerDb, spec: NewAccount, now: number): { account: AccountRecord; apiKey: string } {
  const account: AccountRecord = {
    id: 'acct_' + randomBase62(12),
    label: spec.label ?? '',
    subscription: requireCount('subscription', spec.subscription, 0),
    payg: requireCount('payg', spec.payg, 0),
    enterprise: requireCount('enterprise', spec.enterprise, 0),
    freeCallsPerMonth: requireCount('freeCallsPerMonth', spec.freeCallsPerMonth, DEFAULT_FREE_CALLS_PER_MONTH),
    freeCallsUsed: 0,
    freeMonth: monthOf(now),
    concurrency: requireCount('concurrency', spec.concurrency, DEFAULT_CONCURRENCY, 1),
    ratePerMinute: requireCount('ratePerMinute', spec.ratePerMinute, DEFAULT_RATE_PER_MINUTE, 1),
    createdAt: now,
  };
  checkBalanceLimit(account, 0, 'Creating the account');
  const apiKey = generateApiKey();
  db.accounts.putSync(account.id, account);
  db.keys.putSync(hashApiKey(apiKey), { accountId: account.id, createdAt: now });
  return { account, apiKey };
}

export function createAccount(db: LedgerDb, spec: NewAccount, now: number): { account: AccountRecord; apiKey: string } {
  return db.root.transactionSync(() => insertAccount(db, spec, now));
}

/** Key hashes of one account (admin path: a scan is fine). */
function keyHashesOf(db: LedgerDb, accountId: string): string[] {
  const out: string[] = [];
  for (const { key, value } of db.keys.getRange({})) if (value.accountId === accountId) out.push(key);
  return out;
}

/** Accepts an API key or an account id; null when neither matches. */
export function resolveAccountId(db: LedgerDb, keyOrId: string): string | null {
  db.root.resetReadTxn();
  if (looksLikeApiKey(keyOrId)) return db.keys.get(hashApiKey(keyOrId))?.accountId ?? null;
  return db.accounts.get(keyOrId) ? keyOrId : null;
}

/** Revokes the given key, or every key of the given account id. Returns how many keys changed. */
export function revoke(db: LedgerDb, keyOrId: string, now: number): number {
  return db.root.transactionSync(() => {
    const hashes = looksLikeApiKey(keyOrId) ? [hashApiKey(keyOrId)] : keyHashesOf(db, keyOrId);
    let changed = 0;
    for (const hash of hashes) {
      const rec = db.keys.get(hash);
      if (!rec || rec.revokedAt !== undefined) continue;
      db.keys.putSync(hash, { ...rec, revokedAt: now });
      changed++;
    }
    return changed;
  });
}

/** Adds credits to one balance; returns the new balances, or null for an unknown account. */
export function addCredits(db: LedgerDb, accountId: string, amount: number, to: BalanceName, now: number): Balances | null {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new LedgerInputError(`Expected a positive integer for amount but received ${String(amount)}`);
  }
  if (!SPEND_ORDER.includes(to)) throw new LedgerInputError(`Expected a balance name for to but received ${String(to)}`);
  return db.root.transactionSync(() => {
    const account = db.accounts.get(accountId);
    if (!account) return null;
    checkBalanceLimit(account, amount, `Adding ${amount} to ${to}`);
    const next = { ...account, [to]: account[to] + amount };
    db.accounts.putSync(accountId, next);
    return balancesOf(next, monthOf(now));
  });
}

export function listAccounts(db: LedgerDb, now: number): AccountSummary[] {
  db.root.resetReadTxn();
  const live = new Set<string>();
  const known = new Set<string>();
  for (const { value } of db.keys.getRange({})) {
    known.add(value.accountId);
    if (value.revokedAt === undefined) live.add(value.accountId);
  }
  const month = monthOf(now);
  const out: AccountSummary[] = [];
  for (const { value } of db.accounts.getRange({})) {
    out.push({
      ...viewOf(value),
      balances: balancesOf(value, month),
      revoked: known.has(value.id) && !live.has(value.id),
      createdAt: value.createdAt,
    });
  }
  return out.sort((a, b) => a.createdAt - b.createdAt);
}
