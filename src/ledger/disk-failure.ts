// What counts as a disk that cannot take a write, for the LMDB ledger's 503s and retries.

/** A disk that cannot take a write: full (ENOSPC, LMDB's MDB_MAP_FULL, disk-room.ts's refusal) or failing (EIO). */
export function isDiskFailure(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && /^(ENOSPC|EIO|EDQUOT|EROFS|MDB_MAP_FULL)$/.test(e.code)) return true;
  return typeof e?.message === 'string' && /No space left on device|Input\/output error|Disk quota exceeded|Read-only file system|MDB_MAP_FULL/.test(e.message);
}
