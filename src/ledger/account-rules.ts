// Account rules both backends share, pure: a new account's validated record, the balance limit, the
// monthly free-call allowance, and the views built from a record.

import type { AccountSummary, AccountView, Balances, NewAccount } from './ledger.js';
import { BalanceLimitError, LedgerInputError } from './ledger.js';
import type { AccountRecord } from './records.js';
import { newAccountId } from './ids.js';
import { DEFAULT_CONCURRENCY, DEFAULT_FREE_CALLS_PER_MONTH, DEFAULT_RATE_PER_MINUTE } from './prices.js';

/** Largest total credits an account may hold: past it, a JS number no longer counts single credits. */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

/**
 * The one balance-limit check: after adding `amount`, the three balances together (and so each one)
 * stay exact integers. Counted in BigInt so the check itself cannot round.
 */
export function checkBalanceLimit(account: Pick<AccountRecord, 'subscription' | 'payg' | 'enterprise'>, amount: number, change: string): void {
  const total = BigInt(account.subscription) + BigInt(account.payg) + BigInt(account.enterprise) + BigInt(amount);
  if (total > BigInt(MAX_BALANCE)) throw balanceLimitError(change, total);
}

export function balanceLimitError(change: string, total: bigint | string): BalanceLimitError {
  return new BalanceLimitError(
    `${change} would bring the account's total to ${total} credits, past the largest exact balance ${MAX_BALANCE} (Number.MAX_SAFE_INTEGER); nothing was changed`,
  );
}

/** Calendar month in UTC, e.g. `2025-07`: free calls reset when this changes. */
export function monthOf(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function freeCallsLeft(account: Pick<AccountRecord, 'freeMonth' | 'freeCallsUsed' | 'freeCallsPerMonth'>, month: string): number {
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

export function summaryOf(account: AccountRecord, month: string, revoked: boolean): AccountSummary {
  return { ...viewOf(account), balances: balancesOf(account, month), revoked, createdAt: account.createdAt };
}

function requireCount(name: string, value: number | undefined, fallback: number, min = 0): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) {
    throw new LedgerInputError(`Expected an integer >= ${min} for ${name} but received ${String(value)}`);
  }
  return v;
}

/** A new account's record with defaults filled in; throws LedgerInputError / BalanceLimitError. */
export function newAccountRecord(spec: NewAccount, now: number): AccountRecord {
  const account: AccountRecord = {
    id: newAccountId(),
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
  return account;
}

/** Checks an amount of credits to add; throws LedgerInputError. */
export function checkCreditAmount(amount: number, to: string): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new LedgerInputError(`Expected a positive integer for amount but received ${String(amount)}`);
  }
  if (to !== 'subscription' && to !== 'payg' && to !== 'enterprise') {
    throw new LedgerInputError(`Expected a balance name for to but received ${String(to)}`);
  }
}
