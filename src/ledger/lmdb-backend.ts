// The async Ledger over the synchronous LMDB ledger: each method answers at once (a resolved promise);
// nothing here waits. Slots and storage come back with async release() to fit the interface.

import type { LedgerBackend } from './ledger.js';
import { openLmdbLedger, type LmdbLedger, type LmdbLedgerOptions } from './lmdb-ledger.js';

export function lmdbBackend(store: LmdbLedger): LedgerBackend {
  return {
    kind: 'lmdb',
    location: store.dir,
    authenticate: async (apiKey) => store.authenticate(apiKey),
    balances: async (accountId) => store.balances(accountId),
    async acquireSlot(account) {
      const slot = store.acquireSlot(account);
      return slot && { release: async () => slot.release() };
    },
    takeRate: async (account, units) => store.takeRate(account, units),
    peekRate: async (account) => store.peekRate(account),
    reserve: async (account, size) => store.reserve(account, size),
    settle: async (reservation, usage) => store.settle(reservation, usage),
    refund: async (reservation) => store.refund(reservation),
    async reserveStorage(account, bytes, quotaBytes) {
      const held = store.reserveStorage(account, bytes, quotaBytes);
      return held.ok ? { ok: true, release: async () => held.release() } : held;
    },
    storageUsed: async (accountId) => store.storageUsed(accountId),
    isOpen: () => store.isOpen(),
    close: () => store.close(),

    createAccount: async (spec) => store.createAccount(spec),
    resolveAccount: async (keyOrId) => store.resolveAccount(keyOrId),
    revoke: async (keyOrId) => store.revoke(keyOrId),
    addCredits: async (accountId, amount, to) => store.addCredits(accountId, amount, to),
    listAccounts: async () => store.listAccounts(),
    summarizeUsage: async (sinceMs) => store.summarizeUsage(sinceMs),
    inFlight: async (accountId) => store.inFlight(accountId),
    reconcile: async () => store.reconcile(),
    ensureDemoKey: async () => store.ensureDemoKey(),
  };
}

export function openLmdbBackend(dir: string, opts: LmdbLedgerOptions = {}): LedgerBackend {
  return lmdbBackend(openLmdbLedger(dir, opts));
}
