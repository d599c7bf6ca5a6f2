// Account and key records on LMDB and the admin operations on them. Synchronous: each write is one
// transactionSync on the caller's thread.

import type { AccountSummary, Balances, BalanceName, NewAccount } from './ledger.js';
import type { LedgerDb } from './db.js';
import type { AccountRecord } from './records.js';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './key-hash.js';
import { balancesOf, checkBalanceLimit, checkCreditAmount, monthOf, newAccountRecord, summaryOf } from './account-rules.js';

/** Creates an account with one key inside the caller's write transaction; returns the key (shown once). */
export function insertAccount(db: LedgerDb, spec: NewAccount, now: number): { account: AccountRecord; apiKey: string } {
  const account = newAccountRecord(spec, now);
  const apiKey = generateApiKey();
  db.accounts.putSync(account.id, account);
  db.keys.putSync(hashApiKey(apiKey), { accountId: account.id, createdAt: now });
  return { account, apiKey };
}

export function createAccount(db: LedgerDb, spec: NewAccount, now: number): { account: AccountRecord; apiKey: string } {
  return db.write(() => insertAccount(db, spec, now));
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
  return db.write(() => {
    const hashes = looksLikeApiKey(keyOrId) ? [hashApiKey(keyOrId)] : keyHashesOf(db, keyOrId);
    let changed = 0;
    for (const hash of hashes) {
      const rec = db.keys.get(hash);
      if (!rec || rec.revokedAt !== undefined) continue;
      db.keys.putSync(hash, { ...rec, revokedAt: now });
      changed++;
    }
    return changed;
  }, 'give');
}

/** Adds credits to one balance; returns the new balances, or null for an unknown account. */
export function addCredits(db: LedgerDb, accountId: string, amount: number, to: BalanceName, now: number): Balances | null {
  checkCreditAmount(amount, to);
  return db.write(() => {
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
  for (const { value } of db.accounts.getRange({})) out.push(summaryOf(value, month, known.has(value.id) && !live.has(value.id)));
  return out.sort((a, b) => a.createdAt - b.createdAt);
}
