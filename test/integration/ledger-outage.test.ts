// A ledger outage, CI-sized: PostgreSQL killed as `pg_ctl stop -m immediate` does, right after answers,
// under the default `periodic` durability. Every answer is a 200 or a 503 `ledger_unavailable` with
// Retry-After (no 500, no cut connection); every 200's credit survives the crash (its settle was durable
// before the answer); the slots of the failed requests come back once the database does.
import t from 'tap';
import pg from 'pg';
import { postImage } from '../helpers/api.js';
import { firstError, request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { startPostgres } from '../helpers/postgres.js';
import { pollUntilAsync } from '../helpers/poll.js';
import { startTestServer, quietLogger } from '../helpers/server.js';
import { openPgLedger } from '../../src/ledger/pg/pg-ledger.js';
import type { LedgerBackend } from '../../src/ledger/ledger.js';
import type { FakePool } from '../helpers/fake-pool.js';

t.test('PostgreSQL crashed right after 200s and down for a while: 200 or 503 ledger_unavailable, credits exact, slots back', async (t) => {
  const pgServer = await startPostgres(t, { fsync: 'on', full_page_writes: 'on' });
  const url = await pgServer.createDatabase();
  const ledger = await openPgLedger(url, { leaseMs: 30_000, waitMs: 1000, connectTimeoutMs: 1000 });
  t.teardown(() => ledger.close());
  const { account, apiKey } = await ledger.createAccount({ subscription: 100, concurrency: 2, freeCallsPerMonth: 0 });
  const srv = await startTestServer<FakePool, LedgerBackend>(t, { ledger, log: quietLogger });
  const headers = { 'X-Api-Key': apiKey };
  const image = await makeImage('png');

  let charged = 0;
  for (let i = 0; i < 4; i++) {
    const res = await postImage(srv.url, image, {}, headers);
    t.equal(res.status, 200);
    charged += Number(res.headers['x-credits-charged']);
  }
  await pgServer.crash(); // at once after the answers: what was only acknowledged is lost now

  const health = await request(`${srv.url}/healthz`);
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await postImage(srv.url, image, {}, headers);
    statuses.push(res.status);
    t.equal(res.status, 503, 'the database is down: 503');
    t.equal(firstError(res).code, 'ledger_unavailable');
    t.equal(res.headers['retry-after'], '5');
  }
  t.equal(health.status, 200, 'healthz stays 200 (liveness)');
  const ready = await request(`${srv.url}/readyz`);
  t.equal(ready.status, 503, 'readyz takes the node out');
  t.equal((JSON.parse(ready.text()) as { checks: { ledger: boolean } }).checks.ledger, false);
  t.equal((JSON.parse((await request(`${srv.url}/healthz`)).text()) as { ledger: string }).ledger, 'down');

  await pgServer.start();
  // Recovers by itself: the next request after the database answers is served.
  const back = await pollUntilAsync(
    async () => {
      const res = await postImage(srv.url, image, {}, headers);
      t.not(res.status, 500, 'never a 500');
      return res.status === 200 ? res : undefined;
    },
    'a 200 after the restart',
    20_000,
    200,
  );
  charged += Number(back.headers['x-credits-charged']);
  t.equal((JSON.parse((await request(`${srv.url}/healthz`)).text()) as { ledger: string }).ledger, 'up');

  const balances = await ledger.balances(account.id);
  t.equal(balances.total, 100 - charged, 'every 200 charged exactly once, none lost in the crash');
  const usage = await ledger.summarizeUsage(0);
  t.equal(usage[0]?.requests, charged, 'one usage row per 200');
  const inFlight = await pollUntilAsync(
    async () => {
      const f = await ledger.inFlight(account.id);
      return f.holds === 0 && f.slotOwners.length === 0 ? f : undefined;
    },
    'slots and holds given back',
    5_000,
    100,
  );
  t.same(inFlight, { holds: 0, slotOwners: [] }, 'no slot or hold left by the failed requests');
  t.same(srv.ledger, ledger);
  t.ok(statuses.every((s) => s === 503));
});

t.test('a settle whose answer is lost in a stall commits when the database goes on, and is voided: never a charge without its result', async (t) => {
  const pgServer = await startPostgres(t);
  const url = await pgServer.createDatabase();
  const ledger = await openPgLedger(url, { leaseMs: 30_000, waitMs: 800, connectTimeoutMs: 800 });
  t.teardown(() => ledger.close());
  const { account, apiKey } = await ledger.createAccount({ subscription: 10, concurrency: 2, freeCallsPerMonth: 0 });
  const acct = (await ledger.authenticate(apiKey))!;
  const db = new pg.Pool({ connectionString: url, max: 1 });
  t.teardown(() => db.end());
  const usageRows = async () =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM cutout.usage WHERE account_id = $1', [account.id])).rows[0]!.n);
  t.equal((await ledger.balances(account.id)).subscription, 10);

  const reservation = await ledger.reserve(acct, 'preview');
  t.equal((await ledger.balances(account.id)).subscription, 9, 'held');
  pgServer.stall(true);
  const settle = ledger.settle(reservation, { outputPixels: 100, status: 200 });
  await t.rejects(settle, { code: 'ledger_unavailable' }, 'no answer within the wait: the request gets 503');
  await t.resolves(ledger.refund(reservation), 'the refund is queued, not thrown');
  pgServer.stall(false); // the stalled settle now runs and commits

  // Within a few recovery passes: the late settle is undone, the credit is back, no usage row.
  await pollUntilAsync(
    async () => ((await ledger.balances(account.id)).subscription === 10 && (await usageRows()) === 0 ? true : null),
    'the late settle voided',
    10_000,
  );
  t.equal((await ledger.balances(account.id)).subscription, 10, 'the credit came back');
  t.equal(await usageRows(), 0, 'no usage row for a result that was not sent');
  // Nothing more moves afterwards (the void is retried for a lease but finds nothing).
  await new Promise((r) => setTimeout(r, 2500));
  t.equal((await ledger.balances(account.id)).subscription, 10, 'given back once');
});

t.test('a node idle before the outage still gives back a failed release once the database returns (not a lease later)', async (t) => {
  // Durable commits, so the slot survives the crash (an unflushed one would vanish with it).
  const pgServer = await startPostgres(t, { fsync: 'on', full_page_writes: 'on' });
  const url = await pgServer.createDatabase();
  const ledger = await openPgLedger(url, { leaseMs: 30_000, waitMs: 800, connectTimeoutMs: 800, durability: 'fsync' });
  t.teardown(() => ledger.close());
  const { account, apiKey } = await ledger.createAccount({ subscription: 10, concurrency: 1, freeCallsPerMonth: 0 });
  const acct = (await ledger.authenticate(apiKey))!;
  // Idle past the first recovery passes (one of them, with nothing to do, once stayed "running" for ever).
  await new Promise((r) => setTimeout(r, 2500));
  const slot = (await ledger.acquireSlot(acct))!;
  t.ok(slot, 'slot taken');
  await pgServer.crash();
  await slot.release(); // fails: queued for the recovery
  await pgServer.start();
  const back = Date.now();
  const db = new pg.Pool({ connectionString: url, max: 1 });
  t.teardown(() => db.end());
  await pollUntilAsync(
    async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM cutout.slots WHERE account_id = $1', [account.id])).rows[0]!.n) === 0 || null,
    'the slot given back',
    5000,
  );
  t.ok(Date.now() - back < 5000, `the slot came back ${Date.now() - back} ms after the database`);
  t.ok(await ledger.acquireSlot(acct), 'the key can take its slot again');
});

t.test('the first request after the database returns does not meet the slot a failed request left (no 429 from requests that ended)', async (t) => {
  const pgServer = await startPostgres(t, { fsync: 'on', full_page_writes: 'on' });
  const url = await pgServer.createDatabase();
  const ledger = await openPgLedger(url, { leaseMs: 30_000, waitMs: 800, connectTimeoutMs: 800, durability: 'fsync' });
  t.teardown(() => ledger.close());
  const { apiKey } = await ledger.createAccount({ subscription: 10, concurrency: 1, freeCallsPerMonth: 0 });
  const acct = (await ledger.authenticate(apiKey))!;
  const slot = (await ledger.acquireSlot(acct))!;
  t.ok(slot, 'slot taken');
  await pgServer.crash();
  await slot.release(); // fails: queued for the recovery, which runs once a second
  await pgServer.start();
  // At once, as a client retrying its 503 would: authentication is the first call that finds the
  // database back, and the slot must already be free (the old code left it taken up to a second: 429).
  const again = await ledger.authenticate(apiKey);
  t.ok(again, 'authenticated');
  const next = await ledger.acquireSlot(again!);
  t.ok(next, "the key takes its one slot at once: the failed request's slot was given back first");
  await next?.release();
});
