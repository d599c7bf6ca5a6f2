// The pool to the ledger database, opened (reachable, then migrated) and ended, and the request path's
// one way to call it: a prepared statement bounded by the wait, whose failure to reach the database
// becomes LedgerUnavailableError (503 `ledger_unavailable`).

import pg from 'pg';
import { LedgerUnavailableError } from '../ledger.js';
import type { Durability } from '../../domain/durability.js';
import { redactUrl } from '../../domain/ledger-url.js';
import { migrate } from './migrate.js';
import { openConnections, type OpenConnections } from './pool-connections.js';
import { Q, type QueryName } from './pg-queries.js';

/** close() waits this long at most for the pool's sockets to close. */
const CLOSE_WAIT_MS = 5000;

/**
 * Is this failure the database being unreachable or unable to answer (503), rather than a bug (500)?
 * Errors without a SQLSTATE are the network's or the client's timeouts (refused, reset, terminated,
 * `Query read timeout`, `timeout exceeded when trying to connect`). With one: class 08 (connection),
 * 53 (resources: disk full, too many connections), 57 (operator: shutdown, cancelled by statement_timeout),
 * 58 (system: I/O) and XX (internal).
 */
export function isUnavailableError(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return /^(08|53|57|58|XX)/.test(err.code ?? '');
  return err instanceof Error;
}

export interface PgConnectOptions {
  durability?: Durability | undefined;
  maxConnections?: number | undefined;
  connectTimeoutMs?: number | undefined;
  waitMs?: number | undefined;
  onError?: ((err: Error) => void) | undefined;
}

/** Told when a call finds the database unavailable, and when the first call after that succeeds. */
export interface AvailabilityWatcher {
  down(): void;
  back(): void;
}

export class PgConnection {
  readonly pool: pg.Pool;
  /** The URL without its password, for messages. */
  readonly shown: string;
  /** False once closing: errors from then on are the ending's own, not news. */
  open = true;
  /** False from a call that found the database unavailable until one succeeds (GET /healthz, /readyz). */
  available = true;
  watcher: AvailabilityWatcher | undefined;
  private readonly connections: OpenConnections;
  private readonly waitMs: number;

  constructor(url: string, opts: PgConnectOptions) {
    this.shown = redactUrl(url);
    this.waitMs = opts.waitMs ?? 3000;
    this.pool = new pg.Pool({
      connectionString: url,
      max: opts.maxConnections ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 3000,
      keepAlive: true,
      idleTimeoutMillis: 60_000,
      application_name: 'cutout',
      // No statement may hang a request for ever on a wedged database.
      statement_timeout: 15_000,
      query_timeout: 20_000,
      // periodic: like LMDB noSync + a flush a second, a commit returns before its WAL reaches the disk
      // (the WAL writer flushes within ~3 × wal_writer_delay); a database crash loses at most that, never
      // consistency. fsync: every commit waits for its WAL flush.
      ...((opts.durability ?? 'periodic') === 'periodic' && { options: '-c synchronous_commit=off' }),
    });
    // An idle connection dropped by the server must not crash the process; the pool reconnects. Once
    // closing, a connection's error is part of its ending (the server's own shutdown), not news.
    this.pool.on('error', (err) => void (this.open && opts.onError?.(err)));
    this.connections = openConnections(this.pool);
  }

  /** One request-path call: bounded by waitMs; an unavailable database becomes LedgerUnavailableError. */
  async run<R extends pg.QueryResultRow>(name: QueryName, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      const result = await this.pool.query<R>({ name, text: Q[name], values, query_timeout: this.waitMs } as pg.QueryConfig);
      const wasDown = !this.available;
      this.available = true;
      // Back: give back what the outage left now, not at the next period (acquireSlot waits for it).
      if (wasDown) this.watcher?.back();
      return result;
    } catch (err) {
      if (!this.open || !isUnavailableError(err)) throw err;
      this.available = false;
      this.watcher?.down();
      throw new LedgerUnavailableError(`the ledger database ${this.shown} is unavailable: ${(err as Error).message}`, { cause: err });
    }
  }

  /** The pool ended and its sockets closed; errors from then on are the ending's own. */
  async end(): Promise<void> {
    this.open = false;
    await this.pool.end();
    await this.connections.allClosed(CLOSE_WAIT_MS);
  }
}

/** Opens the pool and checks the database answers, then applies migrations; either failing ends the pool. */
export async function connectPg(url: string, opts: PgConnectOptions): Promise<PgConnection> {
  const conn = new PgConnection(url, opts);
  try {
    await conn.pool.query('SELECT 1');
  } catch (err) {
    await conn.end().catch(() => {});
    throw new LedgerUnavailableError(`cannot reach the ledger database ${conn.shown}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await migrate(conn.pool);
  } catch (err) {
    await conn.end().catch(() => {});
    throw new LedgerUnavailableError(`cannot migrate the ledger database ${conn.shown}: ${(err as Error).message}`, { cause: err });
  }
  return conn;
}
