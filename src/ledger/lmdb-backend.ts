// The async Ledger over the synchronous LMDB ledger: each method answers at once (a resolved promise),
// except settle, which waits for its commit to reach the disk. Slots and storage come back with async
// release() to fit the interface. A write the disk refuses (full, failing) is LedgerUnavailableError: 503;
// a give-back it refuses (refund, release) is owed and written once there is room (give-backs.ts).

import { LedgerUnavailableError, type LedgerBackend } from './ledger.js';
import { openLmdbLedger, type LmdbLedger, type LmdbLedgerOptions } from './lmdb-ledger.js';
import { isDiskFailure } from './disk-failure.js';
import { giveBacks } from './give-backs.js';

export { isDiskFailure } from './disk-failure.js';

/** Run a request-path call; a disk failure becomes LedgerUnavailableError (nothing was written). */
function guarded<T>(dir: string, fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    if (!isDiskFailure(err)) return Promise.reject(err);
    return Promise.reject(new LedgerUnavailableError(`the ledger in ${dir} cannot write: ${(err as Error).message}`, { cause: err }));
  }
}

export function lmdbBackend(store: LmdbLedger): LedgerBackend {
  const owed = giveBacks();
  const g = <T>(fn: () => T) =>
    guarded(store.dir, () => {
      owed.retry();
      return fn();
    });
  return {
    kind: 'lmdb',
    location: store.dir,
    authenticate: (apiKey) => g(() => store.authenticate(apiKey)),
    balances: (accountId) => g(() => store.balances(accountId)),
    async acquireSlot(account) {
      const slot = await g(() => store.acquireSlot(account));
      return slot && { release: () => g(() => owed.run(() => slot.release())) };
    },
    takeRate: (account, units) => g(() => store.takeRate(account, units)),
    peekRate: (account) => g(() => store.peekRate(account)),
    // Checked before the work: a reserve the disk refuses is a 503 before any photo is processed.
    reserve: (account, size) => g(() => store.reserve(account, size)),
    async settle(reservation, usage) {
      const settled = await g(() => store.settle(reservation, usage));
      // The 200 goes out only once its charge is on disk: `periodic` commits without a flush, so flush
      // now (mdb_env_sync on a libuv thread, not the JS thread, shared by the settles of the moment);
      // `fsync` commits are on disk already. A flush that fails undoes the settle (the page cache still
      // takes writes): the request answers 503 and its refund gives the credit back.
      if (store.durability === 'periodic') {
        await store.flush().catch((err: Error) => {
          if (settled) store.unsettle(settled);
          throw new LedgerUnavailableError(`the ledger in ${store.dir} cannot flush: ${err.message}`, { cause: err });
        });
      }
    },
    refund: (reservation) => g(() => owed.run(() => store.refund(reservation))),
    async reserveStorage(account, bytes, quotaBytes) {
      const held = await g(() => store.reserveStorage(account, bytes, quotaBytes));
      return held.ok ? { ok: true, release: () => g(() => owed.run(() => held.release())) } : held;
    },
    storageUsed: async (accountId) => store.storageUsed(accountId),
    isOpen: () => store.isOpen(),
    close: () => {
      owed.stop();
      return store.close();
    },

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
