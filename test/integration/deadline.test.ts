// --request-timeout: a stalled worker, a task stuck in the queue and a stalled upload each get their
// error at the deadline, the credit back and the slot back; one log line names the request.
import net from 'node:net';
import t, { type Test } from 'tap';
import { postImage } from '../helpers/api.js';
import { firstError } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { FakePool } from '../helpers/fake-pool.js';
import { KEY, startTestServer } from '../helpers/server.js';
import type { Logger } from '../../src/http/server.js';

const TIMEOUT_MS = 300;

function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), error: (m) => lines.push(`ERROR ${m}`) };
}

async function deadlineServer(t: Test) {
  const log = capturingLogger();
  const s = await startTestServer(t, { pool: new FakePool({ workers: 1 }), config: { requestTimeoutMs: TIMEOUT_MS }, log });
  return { ...s, log };
}

t.test('a stalled worker: 503 with Retry-After at the deadline, credit refunded, slot freed, late result dropped', async (t) => {
  const { url, pool, ledger, log, events } = await deadlineServer(t);
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const gate = pool.hold(); // the "worker" never finishes until we say so
  const ended = events.nextEnd('/v1.0/removebg');
  const res = await postImage(url, await makeImage('png'));
  t.equal(res.status, 503);
  t.equal(firstError(res).code, 'service_busy');
  t.match(firstError(res).detail, /within 0\.3 s; no credits were charged/);
  t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
  t.match(res.headers['content-type'], /application\/json/);
  const info = await ended;
  t.equal(info.timedOut, true);
  t.equal(ledger.balancesNow(acct.id).total, before, 'credit refunded');
  t.equal(ledger.counts.refund, 1);
  t.equal(ledger.counts.settle, 0);
  t.equal(ledger.slotsInUse(acct.id), 0, 'slot freed while the worker still runs');
  t.equal(pool.stats().running, 1, 'the task still runs on its worker');
  const lines = log.lines.filter((l) => l.startsWith('deadline:'));
  t.equal(lines.length, 1, 'one log line');
  t.match(lines[0], /^deadline: request #\d+ POST \/v1\.0\/removebg from \S+ passed 0\.3 s while running; answered 503, credits refunded$/);
  gate.release();
  await pool.whenIdle();
  t.equal(ledger.counts.settle, 0, 'the late result is thrown away');
  t.equal((await postImage(url, await makeImage('png'))).status, 200, 'the worker serves the next request');
});

t.test('a task waiting in the queue past its deadline is dropped and never runs', async (t) => {
  const { url, pool, ledger, log } = await deadlineServer(t);
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const gate = pool.hold();
  const first = postImage(url, await makeImage('png', 40, 30));
  await gate.started;
  const second = await postImage(url, await makeImage('png', 20, 10));
  t.equal(second.status, 503);
  t.equal(firstError(second).code, 'service_busy');
  t.equal((await first).status, 503);
  t.equal(pool.stats().dropped, 1, 'the queued task was dropped');
  gate.release();
  await pool.whenIdle();
  t.equal(pool.tasks.length, 1, 'only the first task ever reached a worker');
  t.equal(ledger.balancesNow(acct.id).total, before, 'both refunded');
  t.equal(ledger.slotsInUse(acct.id), 0);
  t.ok(
    log.lines.some((l) => / while queued; answered 503/.test(l)),
    'the queued one is named as queued',
  );
});

t.test('a stalled upload: 408, connection closed, slot freed, nothing reserved', async (t) => {
  const { url, ledger, log, events, server } = await deadlineServer(t);
  const acct = ledger.accountOf(KEY)!;
  const { port } = new URL(url);
  const ended = events.nextEnd('/v1.0/removebg');
  const sock = net.connect(Number(port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  let received = '';
  sock.on('data', (d) => (received += d.toString('latin1')));
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.write(
    `POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\nContent-Disposition: form-data; name="image_file"; filename="x"\r\n\r\n` +
      'x'.repeat(1000),
  ); // ... and then nothing more
  await closed;
  t.match(received, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  t.match(received, /"code":"request_timeout"/);
  const info = await ended;
  t.equal(info.status, 408);
  t.equal(info.timedOut, true);
  t.equal(ledger.slotsInUse(acct.id), 0, 'slot freed');
  t.equal(ledger.counts.reserve, 0, 'never reserved');
  t.equal(server.inflight, 0);
  t.match(
    log.lines.find((l) => l.startsWith('deadline:')),
    /while body; answered 408$/,
  );
});

t.test('requests that finish in time are not touched by their deadline', async (t) => {
  const { url, log, events } = await deadlineServer(t);
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const image = await makeImage('png');
  const before = timers();
  for (let i = 0; i < 3; i++) {
    const ended = events.nextEnd('/v1.0/removebg');
    t.equal((await postImage(url, image)).status, 200);
    t.equal((await ended).timedOut, false);
  }
  t.equal(timers(), before, 'every deadline timer was cleared with its response');
  t.same(
    log.lines.filter((l) => l.startsWith('deadline:')),
    [],
  );
});
