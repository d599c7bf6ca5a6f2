// Applies the missing migrations at start, all in one transaction under a transaction-scoped advisory
// lock: nodes starting at once queue on the lock, and each later one finds the work done. A failed
// migration rolls back whole. A database newer than this build is refused (downgrade), not touched.

import type pg from 'pg';
import { MIGRATIONS, type Migration } from './migrations.js';

/** pg_advisory_xact_lock key for migrations ('cutout-m' as 8 bytes). */
export const MIGRATION_LOCK = 0x6375746f75742d6dn;

export interface MigrationResult {
  /** Versions this call applied (empty when another node, or an earlier start, had done it). */
  applied: number[];
  version: number;
}

export class SchemaTooNewError extends Error {
  readonly code = 'ledger_schema_too_new';
}

export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationResult> {
  const latest = migrations.reduce((v, m) => Math.max(v, m.version), 0);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query('CREATE SCHEMA IF NOT EXISTS cutout');
    await client.query(`CREATE TABLE IF NOT EXISTS cutout.schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM cutout.schema_migrations');
    const have = new Set(rows.map((r) => Number(r.version)));
    const newest = Math.max(0, ...have);
    if (newest > latest) {
      throw new SchemaTooNewError(
        `the ledger database is at schema version ${newest}, newer than this cutout knows (${latest}); run a cutout at least as new as the one that migrated it`,
      );
    }
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (have.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO cutout.schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return { applied, version: Math.max(newest, latest) };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
