// The Ledger on PostgreSQL, shared by every node. Each operation is one round trip: a prepared statement
// or one of the functions in migrations.ts, which check and write inside the database under row locks;
// no JS code reads a balance and writes it back, and no transaction stays open across an inference.
// Loaded only when a postgres:// URL is configured (open-ledger.ts imports it dynamically).

import { hostname } from 'node:os';
import pg from 'pg';
import type { AccountSummary, AccountView, Balances, BalanceName, LedgerBackend, ReconcileReport, UsageSummary } from '../ledger.js';
import { InsufficientCreditsError, LedgerUnavailableError } from '../ledger.js';
import type { Durability } from '../../domain/durability.js';
import type { AccountRecord } from '../records.js';
import { balanceLimitError, balancesOf, checkCreditAmount, MAX_BALANCE, monthOf, newAccountRecord, summaryOf, viewOf } from '../account-rules.js';
import { offersFor } from '../quote.js';
import { rateCost, refusal, stateOf, windowOf } from '../rate-window.js';
import { generateApiKey, hashApiKey, looksLikeApiKey } from '../key-hash.js';
import { nextId, randomBase62 } from '../ids.js';
import { redactUrl } from '../../domain/ledger-url.js';
import { DEMO_ACCOUNT } from '../prices.js';
import { migrate } from './migrate.js';
import { LeaseKeeper } from './pg-leases.js';
import { openConnections } from './pool-connections.js';

export interface PgLedgerOptions {
  /** Clock for months, rate windows and usage times, unix ms (tests inject one). Leases use the database's clock. */
  now?: (() => number) | undefined;
  /** `periodic` (default): synchronous_commit off, a commit reaches the disk within ~0.6 s; `fsync`: on. */
  durability?: Durability | undefined;
  /** Lease of this node's slots and holds, ms; renewed every third of it. Default 30 s. */
  leaseMs?: number | undefined;
  /** Connections in the pool. Default 10. */
  maxConnections?: number | undefined;
  /** How long to wait for the database at start and for a connection later, ms. Default 3000. */
  connectTimeoutMs?: number | undefined;
  /**
   * The request path's bounded wait for one call, ms (a connection and the statement's answer each):
   * past it the call fails with LedgerUnavailableError (503 `ledger_unavailable`). Default 3000.
   */
  waitMs?: number | undefined;
  /** Names this node in the slots and holds it owns. Default `<host>/<pid>/<random>`. */
  nodeId?: string | undefined;
  onReconcile?: ((report: ReconcileReport) => void) | undefined;
  onError?: ((err: Error) => void) | undefined;
}

/** While the database is down or something is left to give back, the retry runs this often. */
const RECOVERY_PERIOD_MS = 1000;

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

/** close() waits this long at most for the pool's sockets to close. */
const CLOSE_WAIT_MS = 5000;

/** pg_advisory_xact_lock key for the demo account ('cutout-d'). */
const DEMO_LOCK = 0x6375746f75742d64n.toString();

export { LedgerUnavailableError };

interface AccountRow {
  id: string;
  label: string;
  subscription: string;
  payg: string;
  enterprise: string;
  free_calls_per_month: string;
  free_calls_used: string;
  free_month: string;
  concurrency: string;
  rate_per_minute: string;
  created_at: string;
}

// bigint columns arrive as strings; every balance is at most 2^53-1 (a CHECK), so Number is exact.
function recordOf(r: AccountRow): AccountRecord {
  return {
    id: r.id,
    label: r.label,
    subscription: Number(r.subscription),
    payg: Number(r.payg),
    enterprise: Number(r.enterprise),
    freeCallsPerMonth: Number(r.free_calls_per_month),
    freeCallsUsed: Number(r.free_calls_used),
    freeMonth: r.free_month,
    concurrency: Number(r.concurrency),
    ratePerMinute: Number(r.rate_per_minute),
    createdAt: Number(r.created_at),
  };
}

const Q = {
  authenticate: 'SELECT a.* FROM cutout.keys k JOIN cutout.accounts a ON a.id = k.account_id WHERE k.hash = $1 AND k.revoked_at IS NULL',
  account: 'SELECT * FROM cutout.accounts WHERE id = $1',
  acquireSlot: 'SELECT cutout.acquire_slot($1, $2, $3, $4, $5, $6) AS ok',
  releaseSlot: 'DELETE FROM cutout.slots WHERE id = $1',
  takeRate: 'SELECT o_ok, o_used FROM cutout.take_rate($1, $2, $3, $4)',
  peekRate: 'SELECT window_start, used FROM cutout.rate WHERE account_id = $1',
  reserve: 'SELECT o_size, o_credits, o_free_call FROM cutout.reserve($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
  // The one commit that must be on disk before its answer (a 200 goes out only after it): whatever the
  // connection's durability, this transaction commits with synchronous_commit on (set_config is local to it).
  settle: `WITH h AS (DELETE FROM cutout.holds WHERE id = $1 RETURNING *)
           INSERT INTO cutout.usage (reservation_id, t, account_id, size, credits, free_call, output_pixels, status,
                                     draw_subscription, draw_payg, draw_enterprise, free_month)
           SELECT h.id, $2, h.account_id, h.size, h.credits, h.free_month IS NOT NULL, $3, $4,
                  h.draw_subscription, h.draw_payg, h.draw_enterprise, h.free_month
             FROM h CROSS JOIN (SELECT set_config('synchronous_commit', 'on', true)) durable`,
  voidReservation: 'SELECT cutout.void_reservation($1) AS outcome',
  refund: 'SELECT cutout.refund($1) AS ok',
  takeStorage: 'SELECT o_ok, o_used FROM cutout.take_storage($1, $2, $3)',
  releaseStorage: 'UPDATE cutout.storage SET bytes = greatest(0, bytes - $2), files = greatest(0, files - 1) WHERE account_id = $1',
  storageUsed: 'SELECT bytes, files FROM cutout.storage WHERE account_id = $1',
  renew: 'SELECT cutout.renew($1, $2, $3)',
  probe: 'SELECT 1',
  // After an outage: this node's rows that it no longer tracks, made before the sweep began (below).
  sweepOwnSlots: 'DELETE FROM cutout.slots WHERE owner = $1 AND created_at < $2 AND NOT (id = ANY ($3::text[]))',
  sweepOwnHolds: `SELECT h.credits, h.free_month IS NOT NULL AS free_call, cutout.refund(h.id) AS ok
                    FROM cutout.holds h WHERE h.owner = $1 AND h.created_at < $2 AND NOT (h.id = ANY ($3::text[]))`,
  reap: 'SELECT o_holds, o_credits, o_free_calls, o_slots FROM cutout.reap()',
} as const;

/** Opens the pool, checks the database answers, applies migrations, starts this node's lease keeper. */
export async function openPgLedger(url: string, opts: PgLedgerOptions = {}): Promise<LedgerBackend> {
  const now = opts.now ?? Date.now;
  const leaseMs = opts.leaseMs ?? 30_000;
  const shown = redactUrl(url);
  const node = opts.nodeId ?? `${hostname()}/${process.pid}/${randomBase62(6)}`;
  let open = true;
  const pool = new pg.Pool({
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
  pool.on('error', (err) => void (open && opts.onError?.(err)));
  const connections = openConnections(pool);
  /** The pool ended and its sockets closed; errors from then on are the ending's own. */
  const endPool = async (): Promise<void> => {
    open = false;
    await pool.end();
    await connections.allClosed(CLOSE_WAIT_MS);
  };

  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await endPool().catch(() => {});
    throw new LedgerUnavailableError(`cannot reach the ledger database ${shown}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await migrate(pool);
  } catch (err) {
    await endPool().catch(() => {});
    throw new LedgerUnavailableError(`cannot migrate the ledger database ${shown}: ${(err as Error).message}`, { cause: err });
  }

  const waitMs = opts.waitMs ?? 3000;
  /** False from a call that found the database unavailable until one succeeds (GET /healthz, /readyz). */
  let available = true;
  /**
   * What failed calls left to give back, id → when it was added: slots to delete and holds to refund
   * whose release or refund failed, or whose acquire or reserve may have landed without its answer. The
   * recovery retries them every second (both are idempotent) for a lease after the database answers
   * again, since a statement stalled in a stopped database may still commit when it resumes.
   */
  const pendingSlots = new Map<string, number>();
  const pendingHolds = new Map<string, number>();
  /** Reservations whose settle was sent but not answered: voided (refunded, or a late settle undone). */
  const pendingVoids = new Map<string, number>();
  /**
   * Set by any call that found the database unavailable; cleared by a sweep of this node's own rows once
   * it answers again. A crashed database comes back without its last unflushed commits (periodic
   * durability): a slot release or a refund it had acknowledged may be undone, leaving a row this node
   * no longer tracks nor renews, which would hold the account's slot or credits for a whole lease.
   */
  let sweepOwn = false;

  /** One request-path call: bounded by waitMs; an unavailable database becomes LedgerUnavailableError. */
  const run = async <R extends pg.QueryResultRow>(name: keyof typeof Q, values: unknown[]): Promise<pg.QueryResult<R>> => {
    try {
      const result = await pool.query<R>({ name, text: Q[name], values, query_timeout: waitMs } as pg.QueryConfig);
      const wasDown = !available;
      available = true;
      // Back: give back what the outage left now, not at the next period (acquireSlot waits for it).
      if (wasDown) void recover();
      return result;
    } catch (err) {
      if (!open || !isUnavailableError(err)) throw err;
      available = false;
      sweepOwn = true;
      throw new LedgerUnavailableError(`the ledger database ${shown} is unavailable: ${(err as Error).message}`, { cause: err });
    }
  };

  let recovering: Promise<void> | null = null;
  /**
   * Give back what failed calls left, or probe a database marked down; runs every RECOVERY_PERIOD_MS.
   * `recovering` is set after the pass has started and cleared when it ends: a pass with nothing to
   * await finishes inside its own start, and clearing it there (before the assignment) left the very
   * first, idle pass in place for ever, so nothing was ever given back until the lease lapsed.
   */
  const recover = (): Promise<void> => {
    if (recovering) return recovering;
    const pass = recoverOnce().finally(() => {
      if (recovering === pass) recovering = null;
    });
    recovering = pass;
    return pass;
  };
  const recoverOnce = async (): Promise<void> => {
    try {
      if (!available) await run('probe', []);
      // Back: renew now rather than at the keeper's next period, so /readyz and /healthz say so at once.
      if (!leases.healthy) await leases.tick();
      if (sweepOwn) await sweepOwnRows();
      const doneBefore = Date.now() - leaseMs;
      for (const [id, added] of [...pendingSlots]) {
        await run('releaseSlot', [id]);
        if (added < doneBefore) pendingSlots.delete(id);
      }
      for (const [id, added] of [...pendingHolds]) {
        await run('refund', [id]);
        if (added < doneBefore) pendingHolds.delete(id);
      }
      for (const [id, added] of [...pendingVoids]) {
        await run('voidReservation', [id]);
        if (added < doneBefore) pendingVoids.delete(id);
      }
    } catch {
      // still down: the next period tries again
    }
  };
  /**
   * Give back the slots and holds this node owns in the database but does not track: every live request
   * of this node tracks its ids from before its insert (acquireSlot, reserve) until after its delete
   * (release, settle, refund), so such a row is one whose delete was lost. Only rows made before the
   * sweep began: an insert begun after the snapshot below is not in it but is newer. A refund here and a
   * refund by the request both go through cutout.refund, which gives a hold back once.
   */
  const sweepOwnRows = async (): Promise<void> => {
    sweepOwn = false;
    try {
      const before = now();
      const slots = [...leases.slots];
      const holds = [...leases.holds];
      const gone = await run('sweepOwnSlots', [node, before, slots]);
      const refunded = await run<{ credits: string; free_call: boolean; ok: boolean }>('sweepOwnHolds', [node, before, holds]);
      const report: ReconcileReport = { holds: 0, credits: 0, freeCalls: 0, slots: gone.rowCount ?? 0 };
      for (const r of refunded.rows.filter((r) => r.ok)) {
        report.holds++;
        report.credits += Number(r.credits);
        if (r.free_call) report.freeCalls++;
      }
      if (report.holds > 0 || report.slots > 0) opts.onReconcile?.(report);
    } catch (err) {
      sweepOwn = true;
      throw err;
    }
  };
  const recovery = setInterval(() => void recover(), RECOVERY_PERIOD_MS);
  recovery.unref();

  const reap = async (): Promise<ReconcileReport> => {
    const { rows } = await run<{ o_holds: string; o_credits: string; o_free_calls: string; o_slots: string }>('reap', []);
    const r = rows[0]!;
    return { holds: Number(r.o_holds), credits: Number(r.o_credits), freeCalls: Number(r.o_free_calls), slots: Number(r.o_slots) };
  };
  const leases = new LeaseKeeper(
    {
      renew: async (holds, slots) => void (await run('renew', [holds, slots, leaseMs])),
      reap,
    },
    { leaseMs, onReconcile: opts.onReconcile, onError: opts.onError },
  );

  const accountRecord = async (accountId: string): Promise<AccountRecord> => {
    const { rows } = await run<AccountRow>('account', [accountId]);
    if (!rows[0]) throw new Error(`Unknown account ${accountId}`);
    return recordOf(rows[0]);
  };

  const insertAccount = async (client: pg.PoolClient | pg.Pool, a: AccountRecord, hash: string, onlyIfEmpty: boolean): Promise<boolean> => {
    const { rowCount } = await client.query(
      `WITH a AS (
         INSERT INTO cutout.accounts (id, label, subscription, payg, enterprise, free_calls_per_month, free_calls_used, free_month, concurrency, rate_per_minute, created_at)
         SELECT $1, $2, $3, $4, $5, $6, 0, $7, $8, $9, $10 WHERE NOT $12 OR NOT EXISTS (SELECT 1 FROM cutout.accounts)
         RETURNING id)
       INSERT INTO cutout.keys (hash, account_id, created_at) SELECT $11, a.id, $10 FROM a`,
      [a.id, a.label, a.subscription, a.payg, a.enterprise, a.freeCallsPerMonth, a.freeMonth, a.concurrency, a.ratePerMinute, a.createdAt, hash, onlyIfEmpty],
    );
    return rowCount === 1;
  };

  const ledger: LedgerBackend = {
    kind: 'postgres',
    location: shown,

    async authenticate(apiKey) {
      // No cache: a revocation committed by any node applies to the very next request on every node.
      const { rows } = await run<AccountRow>('authenticate', [hashApiKey(apiKey)]);
      return rows[0] ? viewOf(recordOf(rows[0])) : null;
    },

    async balances(accountId) {
      return balancesOf(await accountRecord(accountId), monthOf(now()));
    },

    async acquireSlot(account) {
      // After an outage, the slots its failed requests left are given back first (recover), so they
      // never count against a new request: no 429 from requests that already ended.
      if (recovering) await recovering;
      const id = nextId();
      // Tracked from the start, so a renewal during a slow call covers it; when the call fails (the answer
      // may be lost after the insert) it leaves the set, and an insert that did land lapses and is swept.
      leases.slots.add(id);
      let ok = false;
      try {
        const { rows } = await run<{ ok: boolean }>('acquireSlot', [account.id, id, node, account.concurrency, leaseMs, now()]);
        ok = rows[0]?.ok === true;
      } catch (err) {
        pendingSlots.set(id, Date.now()); // it may have landed: deleted once the database answers
        throw err;
      } finally {
        if (!ok) leases.slots.delete(id);
      }
      if (!ok) return null;
      let released: Promise<void> | null = null;
      return {
        release() {
          released ??= (async () => {
            leases.slots.delete(id);
            // A failed delete is retried every second until the database answers (and lapses anyway).
            await run('releaseSlot', [id]).catch((err: Error) => {
              pendingSlots.set(id, Date.now());
              opts.onError?.(err);
            });
          })();
          return released;
        },
      };
    },

    async takeRate(account, units) {
      const nowMs = now();
      const window = windowOf(nowMs);
      const limit = account.ratePerMinute;
      const { rows } = await run<{ o_ok: boolean; o_used: string }>('takeRate', [account.id, window, rateCost(units), limit]);
      const state = stateOf(limit, Number(rows[0]!.o_used), window);
      return rows[0]!.o_ok ? { ok: true, ...state } : refusal(state, nowMs);
    },

    async peekRate(account) {
      const window = windowOf(now());
      const { rows } = await run<{ window_start: string; used: string }>('peekRate', [account.id]);
      const used = rows[0] && Number(rows[0].window_start) === window ? Number(rows[0].used) : 0;
      return stateOf(account.ratePerMinute, used, window);
    },

    async reserve(account, size) {
      const t = now();
      const offers = offersFor(size);
      const id = nextId();
      leases.holds.add(id);
      let held = false;
      try {
        const { rows } = await run<{ o_size: string; o_credits: string; o_free_call: boolean }>('reserve', [
          account.id,
          id,
          node,
          leaseMs,
          t,
          monthOf(t),
          offers.map((o) => o.size),
          offers.map((o) => o.credits),
          offers.map((o) => o.freeCallOk),
          offers.map((o) => o.onlyIfPayable),
        ]);
        const r = rows[0];
        if (!r) throw new InsufficientCreditsError('Insufficient credits');
        held = true;
        return { id, accountId: account.id, size: r.o_size as typeof offers[number]['size'], credits: Number(r.o_credits), freeCall: r.o_free_call };
      } catch (err) {
        if (err instanceof LedgerUnavailableError) pendingHolds.set(id, Date.now()); // it may have landed: refunded once the database answers
        throw err;
      } finally {
        if (!held) leases.holds.delete(id);
      }
    },

    async settle(reservation, usage) {
      // Durable before it resolves (the query above); no row means the hold is gone (lapsed and swept,
      // or lost with a crashed database's last commits): nothing was charged, so no result may go out.
      let rowCount: number | null;
      try {
        ({ rowCount } = await run('settle', [reservation.id, now(), usage.outputPixels, usage.status]));
      } catch (err) {
        // Unanswered: it may still commit (a stalled database goes on, a lost connection's statement
        // runs). The request answers 503 without its result, so whatever lands is voided once the
        // database answers (retried for a lease, like the refunds).
        if (err instanceof LedgerUnavailableError) pendingVoids.set(reservation.id, Date.now());
        throw err;
      }
      leases.holds.delete(reservation.id);
      return rowCount === 1;
    },

    async refund(reservation) {
      // Untracked first: a failed refund is retried every second until the database answers (and
      // lapses anyway, for a sweep to refund exactly once). Never throws for an unavailable database.
      leases.holds.delete(reservation.id);
      await run('refund', [reservation.id]).catch((err: unknown) => {
        if (!(err instanceof LedgerUnavailableError)) throw err;
        pendingHolds.set(reservation.id, Date.now());
        opts.onError?.(err);
      });
    },

    async reserveStorage(account, bytes, quotaBytes) {
      if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`Expected a byte count for bytes but received ${String(bytes)}`);
      const { rows } = await run<{ o_ok: boolean; o_used: string }>('takeStorage', [account.id, bytes, quotaBytes]);
      if (!rows[0]!.o_ok) return { ok: false, usedBytes: Number(rows[0]!.o_used) };
      let released: Promise<void> | null = null;
      return {
        ok: true,
        release() {
          released ??= run('releaseStorage', [account.id, bytes]).then(() => {});
          return released;
        },
      };
    },

    async storageUsed(accountId) {
      const { rows } = await run<{ bytes: string; files: string }>('storageUsed', [accountId]);
      return rows[0] ? { bytes: Number(rows[0].bytes), files: Number(rows[0].files) } : { bytes: 0, files: 0 };
    },

    isOpen: () => open && leases.healthy && available,

    async close() {
      if (!open) return;
      clearInterval(recovery);
      await recovering;
      open = false;
      await leases.stop();
      // A drained server owns nothing; after a forced stop, give back now rather than at lease end.
      await Promise.all([...leases.holds].map((id) => run('refund', [id]).catch(() => {})));
      await Promise.all([...leases.slots].map((id) => run('releaseSlot', [id]).catch(() => {})));
      await endPool();
    },

    async createAccount(spec) {
      const account = newAccountRecord(spec, now());
      const apiKey = generateApiKey();
      await insertAccount(pool, account, hashApiKey(apiKey), false);
      return { account: viewOf(account), apiKey };
    },

    async resolveAccount(keyOrId) {
      const { rows } = looksLikeApiKey(keyOrId)
        ? await pool.query<{ id: string }>('SELECT account_id AS id FROM cutout.keys WHERE hash = $1', [hashApiKey(keyOrId)])
        : await pool.query<{ id: string }>('SELECT id FROM cutout.accounts WHERE id = $1', [keyOrId]);
      return rows[0]?.id ?? null;
    },

    async revoke(keyOrId) {
      const { rowCount } = looksLikeApiKey(keyOrId)
        ? await pool.query('UPDATE cutout.keys SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL', [hashApiKey(keyOrId), now()])
        : await pool.query('UPDATE cutout.keys SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL', [keyOrId, now()]);
      return rowCount ?? 0;
    },

    async addCredits(accountId, amount, to: BalanceName = 'subscription'): Promise<Balances | null> {
      checkCreditAmount(amount, to);
      // `to` is one of three column names (checked above), never user text in the SQL.
      const { rows } = await pool.query<AccountRow>(
        `UPDATE cutout.accounts SET ${to} = ${to} + $2 WHERE id = $1 AND subscription + payg + enterprise + $2 <= $3 RETURNING *`,
        [accountId, amount, MAX_BALANCE],
      );
      if (rows[0]) return balancesOf(recordOf(rows[0]), monthOf(now()));
      const { rows: found } = await pool.query<{ total: string }>('SELECT subscription + payg + enterprise AS total FROM cutout.accounts WHERE id = $1', [accountId]);
      if (!found[0]) return null;
      throw balanceLimitError(`Adding ${amount} to ${to}`, BigInt(found[0].total) + BigInt(amount));
    },

    async listAccounts(): Promise<AccountSummary[]> {
      const { rows } = await pool.query<AccountRow & { revoked: boolean }>(
        `SELECT a.*, count(k.hash) > 0 AND bool_and(k.revoked_at IS NOT NULL) AS revoked
           FROM cutout.accounts a LEFT JOIN cutout.keys k ON k.account_id = a.id
          GROUP BY a.id ORDER BY a.created_at, a.id`,
      );
      const month = monthOf(now());
      return rows.map((r) => summaryOf(recordOf(r), month, r.revoked));
    },

    async summarizeUsage(sinceMs): Promise<UsageSummary[]> {
      const { rows } = await pool.query<{ account_id: string; label: string | null; status: number; n: string; credits: string; free_calls: string; pixels: string }>(
        `SELECT u.account_id, a.label, u.status, count(*) AS n, sum(u.credits) AS credits,
                count(*) FILTER (WHERE u.free_call) AS free_calls, sum(u.output_pixels) AS pixels
           FROM cutout.usage u LEFT JOIN cutout.accounts a ON a.id = u.account_id
          WHERE u.t >= $1 GROUP BY u.account_id, a.label, u.status`,
        [sinceMs],
      );
      const byAccount = new Map<string, UsageSummary & { pixels: number }>();
      for (const r of rows) {
        let s = byAccount.get(r.account_id);
        if (!s) byAccount.set(r.account_id, (s = { accountId: r.account_id, label: r.label ?? '', requests: 0, credits: 0, freeCalls: 0, outputMegapixels: 0, statuses: {}, pixels: 0 }));
        s.requests += Number(r.n);
        s.credits += Number(r.credits);
        s.freeCalls += Number(r.free_calls);
        s.pixels += Number(r.pixels);
        s.statuses[r.status] = Number(r.n);
      }
      return [...byAccount.values()]
        .map(({ pixels, ...s }) => ({ ...s, outputMegapixels: Math.round((pixels / 1e6) * 1000) / 1000 }))
        .sort((a, b) => a.accountId.localeCompare(b.accountId));
    },

    async inFlight(accountId) {
      const { rows } = await pool.query<{ holds: string; owners: string[] }>(
        `SELECT (SELECT count(*) FROM cutout.holds WHERE account_id = $1) AS holds,
                ARRAY(SELECT owner FROM cutout.slots WHERE account_id = $1 AND expires_at >= clock_timestamp()) AS owners`,
        [accountId],
      );
      return { holds: Number(rows[0]!.holds), slotOwners: rows[0]!.owners };
    },

    reconcile: reap,

    async ensureDemoKey() {
      const account = newAccountRecord(DEMO_ACCOUNT, now());
      const apiKey = generateApiKey();
      const client = await pool.connect();
      try {
        // Nodes starting together on an empty database make one demo account: the lock orders them.
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1)', [DEMO_LOCK]);
        const made = await insertAccount(client, account, hashApiKey(apiKey), true);
        await client.query('COMMIT');
        return made ? apiKey : null;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
  };
  return ledger;
}

export type { AccountView };
