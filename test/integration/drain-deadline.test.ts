// close() drains for at most config.drainTimeoutMs, then closes the connections still open: a slow
// upload cannot hold the stop, and a removal still running is refunded (credit, slot) by its own
// abort path. Each test has a tap timeout: before the deadline existed, close() waited for ever.
import http from 'node:http';
import net from 'node:net';
import t from 'tap';
import { multipart } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';
import type { Logger } from '../../src/http/server.js';

const NO_REQUEST_DEADLINE = { requestTimeoutMs: 3_600_000, drainTimeoutMs: 100 };

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => void lines.push(m), error: (m) => void lines.push(m) };
}

async function untilInflight(server: { inflight: number }, n: number): Promise<void> {
  for (let i = 0; i < 100_000 && server.inflight < n; i++) await new Promise((r) => setImmediate(r));
  if (server.inflight < n) throw new Error(`server never had ${n} request(s) in flight`);
}

t.test('a slow upload is cut at the drain deadline', { timeout: 30_000 }, async (t) => {
  const log = recordingLog();
  const { url, server, ledger, events } = await startTestServer(t, { config: NO_REQUEST_DEADLINE, log });
  const sock = net.connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  const received: Buffer[] = [];
  sock.on('data', (d: Buffer) => received.push(d));
  sock.on('error', () => {}); // a reset is one of the ways to be closed
  const sockClosed = new Promise((r) => sock.once('close', r));
  // 20 MB announced, then 100 kB/s: fast enough for uWS's slow-client rule (a connection that
  // receives under 16 kB in 10 s is closed), and the upload would still take minutes.
  sock.write(
    `POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 20000000\r\n\r\n`,
  );
  const trickle = setInterval(() => sock.writable && sock.write('x'.repeat(2000)), 20);
  sock.once('close', () => clearInterval(trickle));
  t.teardown(() => clearInterval(trickle));
  await untilInflight(server, 1);
  const ended = events.nextEnd('/v1.0/removebg');

  await server.close();
  await sockClosed;
  const info = await ended;
  t.equal(info.aborted, true, 'the handler saw its client leave');
  t.equal(Buffer.concat(received).length, 0, 'nothing was answered mid-upload');
  t.equal(server.inflight, 0);
  t.equal(ledger.counts.reserve, 0, 'nothing was held');
  t.match(log.lines.join('\n'), /drain: 1 request\(s\) still in flight after 0\.1 s \(--drain-timeout\); closing their connections/);
});

t.test('a removal still running at the deadline is refunded and never charged', { timeout: 30_000 }, async (t) => {
  const { url, server, ledger, pool, events } = await startTestServer(t, { config: NO_REQUEST_DEADLINE });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const gate = pool.hold();
  const { body, contentType } = multipart([{ name: 'image_file', value: await makeImage('png'), filename: 'image_file' }]);
  const req = http.request(`${url}/v1.0/removebg`, {
    method: 'POST',
    agent: false,
    headers: { 'X-Api-Key': KEY, 'Content-Type': contentType, 'Content-Length': body.length },
  });
  const outcome = new Promise<string>((resolve) => {
    req.on('response', (res) => resolve(`status ${res.statusCode}`));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  req.end(body);
  await gate.started;
  t.equal(ledger.balancesNow(acct.id).total, before - 1, 'credit held while running');
  const ended = events.nextEnd('/v1.0/removebg');

  await server.close();
  t.match(await outcome, /^(ECONNRESET|socket hang up)$/, 'the connection was closed without an answer');
  t.equal((await ended).aborted, true);
  gate.release(); // the "worker" finishes after the stop: its result is thrown away
  await pool.whenIdle();
  t.equal(ledger.balancesNow(acct.id).total, before, 'credit refunded');
  t.same(ledger.counts, { reserve: 1, settle: 0, refund: 1 });
  t.equal(ledger.outstanding(), 0);
  t.equal(ledger.slotsInUse(acct.id), 0, 'slot freed');
});

t.test('--drain-timeout 0 closes at once; requests that finish in time are untouched', { timeout: 30_000 }, async (t) => {
  const log = recordingLog();
  const { server } = await startTestServer(t, { config: { drainTimeoutMs: 0 }, log });
  await server.close();
  t.same(log.lines, [], 'nothing was in flight: no drain line');
});
