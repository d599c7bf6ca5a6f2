// How ledger commits reach the disk. Pure (no lmdb import), so config parsing can use it.
//
// `periodic`: LMDB `noSync` (a commit only reaches the OS page cache) plus an `mdb_env_sync` on a libuv
//   thread every second and at close. A process crash loses nothing; an OS crash or power loss loses
//   up to the last interval of writes.
// `fsync`: lmdb-js defaults (no `noSync`): every `transactionSync` flushes data and meta page before it
//   returns (~0.5 ms+ per write here), so a committed debit survives power loss.
// See docs/ledger.md ("Durability and speed").

export const DURABILITIES = ['periodic', 'fsync'] as const;
export type Durability = (typeof DURABILITIES)[number];
export const DEFAULT_DURABILITY: Durability = 'periodic';

/** `--durability` / `CUTOUT_DURABILITY` text → Durability; undefined when not given. Throws RangeError. */
export function parseDurability(text: string | undefined): Durability | undefined {
  if (text === undefined || text === '') return undefined;
  const v = text.trim().toLowerCase();
  if ((DURABILITIES as readonly string[]).includes(v)) return v as Durability;
  throw new RangeError(`Expected ${DURABILITIES.join(' or ')} for durability but received '${text}'`);
}
