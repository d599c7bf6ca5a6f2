// Improve storage per account on PostgreSQL: cutout.take_storage counts an upload against the quota
// under the account's row lock; release gives its bytes back.

import type { AccountView, StorageDecision, StorageUse } from '../ledger.js';
import type { PgConnection } from './pg-connection.js';

export async function reserveStorage(conn: PgConnection, account: AccountView, bytes: number, quotaBytes: number): Promise<StorageDecision> {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`Expected a byte count for bytes but received ${String(bytes)}`);
  const { rows } = await conn.run<{ o_ok: boolean; o_used: string }>('takeStorage', [account.id, bytes, quotaBytes]);
  if (!rows[0]!.o_ok) return { ok: false, usedBytes: Number(rows[0]!.o_used) };
  let released: Promise<void> | null = null;
  return {
    ok: true,
    release() {
      released ??= conn.run('releaseStorage', [account.id, bytes]).then(() => {});
      return released;
    },
  };
}

export async function storageUsed(conn: PgConnection, accountId: string): Promise<StorageUse> {
  const { rows } = await conn.run<{ bytes: string; files: string }>('storageUsed', [accountId]);
  return rows[0] ? { bytes: Number(rows[0].bytes), files: Number(rows[0].files) } : { bytes: 0, files: 0 };
}
