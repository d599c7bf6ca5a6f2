// Issue #30 items 1-3, CI-sized: PostgreSQL killed as `pg_ctl stop -m immediate` does, right after answers,
// under the default `periodic` durability. Every answer is a 200 or a 503 `ledger_unavailable` with
// Retry-After (no 500, no cut connection); every 200's credit survives the crash (its settle was durable
// before the answer); the slots of the failed requests come back once the database does.
import t from 'tap';
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
  const back = await pollUntilAsync(async () => {
    const res = await postImage(srv.url, image, {}, headers);
    t.not(res.status, 500, 'never a 500');
    return res.status === 200 ? res : undefined;
  }, 'a 200 after the restart', 20_000, 200);
  charged += Number(back.headers['x-credits-charged']);
  t.equal((JSON.parse((await request(`${srv.url}/healthz`)).text()) as { ledger: string }).ledger, 'up');

  const balances = await ledger.balances(account.id);
  t.equal(balances.total, 100 - charged, 'every 200 charged exactly once, none lost in the crash');
  const usage = await ledger.summarizeUsage(0);
  t.equal(usage[0]?.requests, charged, 'one usage row per 200');
  const inFlight = await pollUntilAsync(async () => {
    const f = await ledger.inFlight(account.id);
    return f.holds === 0 && f.slotOwners.length === 0 ? f : undefined;
  }, 'slots and holds given back', 5_000, 100);
  t.same(inFlight, { holds: 0, slotOwners: [] }, 'no slot or hold left by the failed requests');
  t.same(srv.ledger, ledger);
  t.ok(statuses.every((s) => s === 503));
});
