// The one LMDB root env for the ledger plus its named sub-databases, so one write transaction spans them all.
// Every process that shares a data folder opens it through here. Processes may differ in durability (each
// commit follows its own process's setting); within one process lmdb-js shares one env per folder.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { AccountRecord, HoldRecord, KeyRecord, RateRecord, SlotRecord, StorageRecord, UsageEntry } from './records.js';
import { DEFAULT_DURABILITY, type Durability } from '../domain/durability.js';
import { DiskFullError, diskRoom, type WriteKind } from './disk-room.js';
import { isDiskFailure } from './disk-failure.js';

/**
 * `periodic`: no fsync at commit, a background flush every `flushIntervalMs`. Survives kill -9 of any process;
 * an OS crash or power loss can lose the last interval of writes (see docs/ledger.md).
 * `fsync`: LMDB's default durable commit (~0.5 ms+ per write on this machine).
 */

export interface LedgerDb {
  root: RootDatabase;
  /** What this process asked for when it opened the folder. */
  durability: Durability;
  keys: Database<KeyRecord, string>;
  accounts: Database<AccountRecord, string>;
  holds: Database<HoldRecord, string>;
  /** Key: [accountId, slotId] so one account's slots are one range. */
  slots: Database<SlotRecord, [string, string]>;
  rate: Database<RateRecord, string>;
  /** Key: [unix ms, reservation id]: time-ordered and unique across processes. */
  usage: Database<UsageEntry, [number, string]>;
  /** Key: account id → improve uploads stored (bytes, files). */
  storage: Database<StorageRecord, string>;
  /**
   * Every ledger write goes through here: one synchronous write transaction, refused with DiskFullError
   * (nothing written) when the disk has no room for `kind` (disk-room.ts). Nests like transactionSync.
   */
  write<T>(fn: () => T, kind?: WriteKind): T;
  /** Flush pending writes to disk: resolves after an fsync that began after this call (callers share one). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDbOptions {
  /** Default `periodic`. `relaxed` is its old name (still accepted). */
  durability?: Durability | 'relaxed';
  flushIntervalMs?: number;
}

export function openLedgerDb(dir: string, opts: OpenDbOptions = {}): LedgerDb {
  const durability: Durability = opts.durability === 'relaxed' ? 'periodic' : (opts.durability ?? DEFAULT_DURABILITY);
  mkdirSync(dir, { recursive: true });
  let root: RootDatabase;
  try {
    root = open({
      path: dir,
      maxDbs: 12,
      // lmdb treats a path with an extension as a file; ours is always a folder (`~/.cutout`, tap testdirs).
      noSubdir: false,
      // periodic: commits only touch the OS page cache, which a process crash cannot lose.
      ...(durability === 'periodic' ? { noSync: true } : {}),
    });
  } catch (err) {
    // lmdb-js shares one env per folder within a process, and refuses noSync on one opened durable.
    if (/noSync/.test((err as Error).message)) {
      throw new Error(`The ledger in ${dir} is already open in this process with durability fsync; open it with the same durability`, { cause: err });
    }
    throw err;
  }
  const db = {
    keys: root.openDB<KeyRecord, string>('keys', {}),
    accounts: root.openDB<AccountRecord, string>('accounts', {}),
    holds: root.openDB<HoldRecord, string>('holds', {}),
    slots: root.openDB<SlotRecord, [string, string]>('slots', {}),
    rate: root.openDB<RateRecord, string>('rate', {}),
    usage: root.openDB<UsageEntry, [number, string]>('usage', {}),
    storage: root.openDB<StorageRecord, string>('storage', {}),
  };

  // lmdb-js names the data file data.mdb inside the folder; its stats give LMDB's last page.
  const room = diskRoom(join(dir, 'data.mdb'), () => {
    const stats = root.getStats() as { lastPageNumber: number; pageSize: number };
    return (stats.lastPageNumber + 1) * stats.pageSize;
  });
  const write = <T>(fn: () => T, kind: WriteKind = 'take'): T => {
    try {
      return root.transactionSync(() => {
        room.ensure(kind);
        return fn();
      });
    } catch (err) {
      if (!(err instanceof DiskFullError) && isDiskFailure(err)) room.commitFailed();
      throw err;
    }
  };

  // `sync(cb)` runs mdb_env_sync on a libuv thread; it is missing from lmdb's typings.
  const syncable = root as unknown as { sync(cb: (err?: Error) => void): void };
  const sync = (): Promise<void> => new Promise((resolve, reject) => syncable.sync((err) => (err ? reject(err) : resolve())));
  // Group commit: a caller needs a sync that starts after its call (its commits are then on disk). One
  // sync runs at a time; every caller that comes while it runs shares the one after it, so settles under
  // load cost one fsync per batch instead of one each (and never fill libuv's four threads with syncs).
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const startSync = (): Promise<void> => {
    const p = sync().finally(() => {
      if (running === p) running = undefined;
    });
    running = p;
    return p;
  };
  const flush = (): Promise<void> => {
    if (!running) return startSync();
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return startSync();
      });
    return queued;
  };

  let closing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  if (durability === 'periodic') {
    timer = setInterval(() => {
      if (!closing) flush().catch(() => {});
    }, opts.flushIntervalMs ?? 1000);
    timer.unref();
  }

  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(timer);
      if (durability === 'periodic') await flush();
      await root.close();
      room.close();
    })();
    return closing;
  };

  return { root, durability, ...db, write, flush, close };
}
