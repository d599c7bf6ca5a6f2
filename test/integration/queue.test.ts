// The pool's FIFO seen over HTTP: --max-queue gives 503 service_busy with Retry-After (refunded),
// and a queued request whose client leaves never runs, gets its credit back and frees its slot.
import http from 'node:http';
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { firstError, multipart } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { FakePool } from '../helpers/fake-pool.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('a full queue: 503 service_busy with Retry-After, nothing charged', async (t) => {
  const { url, pool, ledger } = await startTestServer(t, { pool: new FakePool({ workers: 1, maxQueue: 1 }) });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const gate = pool.hold();
  const running = postImage(url, await makeImage('png'));
  await gate.started;
  const queued = postImage(url, await makeImage('png', 32, 16));
  while (pool.stats().queued < 1) await new Promise((r) => setImmediate(r));
  const refused = await postImage(url, await makeImage('png', 8, 8));
  t.equal(refused.status, 503);
  t.equal(firstError(refused).code, 'service_busy');
  t.match(firstError(refused).detail, /queue is full/);
  t.equal(refused.headers['retry-after'], '3', 'backlog of 2 on 1 worker → 3 s');
  gate.release();
  t.equal((await running).status, 200);
  t.equal((await queued).status, 200);
  t.equal(ledger.balancesNow(acct.id).total, before - 2, 'only the two served were charged');
  t.equal(ledger.slotsInUse(acct.id), 0);
});

t.test('a queued request whose client leaves: never runs, refunded, slot freed', async (t) => {
  const { url, pool, ledger, events } = await startTestServer(t, { pool: new FakePool({ workers: 1 }) });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const gate = pool.hold();
  const running = postImage(url, await makeImage('png'));
  await gate.started;

  const { body, contentType } = multipart([{ name: 'image_file', value: await makeImage('png', 20, 10), filename: 'image_file' }]);
  const req = http.request(`${url}/v1.0/removebg`, {
    method: 'POST',
    agent: false,
    headers: { 'X-Api-Key': KEY, 'Content-Type': contentType, 'Content-Length': body.length },
  });
  req.on('error', () => {});
  req.end(body);
  while (pool.stats().queued < 1) await new Promise((r) => setImmediate(r));
  t.equal(ledger.slotsInUse(acct.id), 2);
  const ended = events.nextEnd('/v1.0/removebg');
  req.destroy();
  const info = await ended;
  t.equal(info.aborted, true);
  t.equal(pool.stats().queued, 0, 'dropped from the queue');
  t.equal(pool.stats().dropped, 1);
  t.equal(ledger.slotsInUse(acct.id), 1, 'its slot is free while the first still runs');
  gate.release();
  t.equal((await running).status, 200);
  await pool.whenIdle();
  t.equal(pool.tasks.length, 1, 'the abandoned task never reached a worker');
  t.equal(ledger.balancesNow(acct.id).total, before - 1, 'only the served one was charged');
  t.equal(ledger.outstanding(), 0);
});
