// Requests uWebSockets.js 20.30 refuses itself (docs/http.md, "What uWebSockets.js answers
// itself"): no JSON error is possible for them, and uWS writes nothing either. Most never reach our
// handler; two reach it with good headers, and uWS closes the connection when it meets the bad body
// bytes, dropping whatever the handler wrote (even a synchronous end() in the handler is lost). If a uWS upgrade changes any of this, this test fails and the
// table in docs/http.md needs updating (or a JSON answer becomes possible).
import net from 'node:net';
import t from 'tap';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

/** Everything the server sends before the connection ends; the client half-closes after writing. */
function exchange(port: number, data: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', () => {}); // a reset counts as closed
    s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    s.end(data);
  });
}

const NEVER_REACH_US: Record<string, string> = {
  'HTTP/1.0': 'GET /healthz HTTP/1.0\r\nHost: a\r\n\r\n',
  'no Host': 'GET /healthz HTTP/1.1\r\n\r\n',
  'unparseable request line': 'HELLO\r\n\r\n',
  'HTTP/3.0 version': 'GET /healthz HTTP/3.0\r\nHost: a\r\n\r\n',
  'bare LF line ends': 'GET /healthz HTTP/1.1\nHost: a\n\n',
  'space in a header name': 'GET /healthz HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n',
  'OPTIONS *': 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n',
  'absolute-form target': 'GET http://a/healthz HTTP/1.1\r\nHost: a\r\n\r\n',
  CONNECT: 'CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n',
  '60 header lines': `GET /healthz HTTP/1.1\r\nHost: a\r\n${Array.from({ length: 60 }, (_, i) => `X-${i}: v\r\n`).join('')}\r\n`,
  'lower-case method': 'get /healthz HTTP/1.1\r\nHost: a\r\n\r\n',
  'unknown method': 'FOO /healthz HTTP/1.1\r\nHost: a\r\n\r\n',
  'Content-Length and Transfer-Encoding': 'POST /v1.0/removebg HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
};

const CUT_AT_THE_BODY: Record<string, string> = {
  'malformed chunk size': 'Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
  'non-numeric Content-Length': 'Content-Length: abc\r\n\r\nabc',
};

t.test('uWS drops these before our handler, writing nothing', async (t) => {
  const { server, events } = await startTestServer(t);
  for (const [what, data] of Object.entries(NEVER_REACH_US)) {
    t.equal(await exchange(server.port, data), '', `${what}: nothing written`);
  }
  t.same(events.ended, [], 'no request reached the handler');
  const ok = await exchange(server.port, 'GET /nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  t.match(ok, /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*\r\n\r\n\{"errors":\[\{"title":/, 'a request uWS parses gets our JSON');
});

t.test('uWS cuts these at the body: whatever the handler answers is lost', async (t) => {
  const { server, events, ledger } = await startTestServer(t);
  for (const [what, rest] of Object.entries(CUT_AT_THE_BODY)) {
    const ended = events.nextEnd('/v1.0/removebg');
    const written = await exchange(server.port, `POST /v1.0/removebg HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${KEY}\r\nContent-Type: application/json\r\n${rest}`);
    t.equal(written, '', `${what}: nothing written`);
    const info = await ended;
    // The handler either sees the client leave, or answers an error uWS then drops with the socket.
    t.ok(info.aborted || info.status >= 400, `${what}: the handler ended (${info.aborted ? 'client left' : `answered ${info.status}, never delivered`})`);
  }
  t.equal(ledger.counts.reserve, 0, 'nothing was held');
});

/** Writes `first`, then (unless the server has closed by then) `rest` after `pauseMs`; resolves with
 * what the server wrote and whether it closed before `rest` was sent. */
function inTwoParts(port: number, first: string, rest: string, pauseMs: number): Promise<{ written: string; closedEarly: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sentRest = false;
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ written: Buffer.concat(chunks).toString('latin1'), closedEarly: !sentRest });
    });
    s.write(first);
    const timer = setTimeout(() => {
      sentRest = true;
      s.end(rest);
    }, pauseMs);
  });
}

// uWS 20.30 keeps at most 4 kB of a request head it has not seen the end of (HttpParser's fallback
// buffer, a compile-time 4096 in this build). Over a network a head comes in TCP segments of ~1.4 kB,
// which a slow link hands over in several reads: there a head over 4 kB may be closed unanswered. One
// that arrives in a single read may be far bigger (up to the ~128 kB of the table).
t.test('a request head that does not arrive in one read must fit in 4 kB', async (t) => {
  const { server, events } = await startTestServer(t);
  const start = 'GET /nope HTTP/1.1\r\nHost: a\r\n';
  const end = 'Connection: close\r\n\r\n';
  const junk = (n: number) => `X-Junk: ${'a'.repeat(n)}\r\n`;

  const big = await inTwoParts(server.port, start + junk(5000), end, 5000);
  t.equal(big.written, '', '5 kB of a head without its end: nothing written');
  t.ok(big.closedEarly, '... and the connection closed before the rest of the head was sent (not by the idle timeout)');

  const small = await inTwoParts(server.port, start + junk(3000), end, 100);
  t.match(small.written, /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*\{"errors":\[\{"title":/, 'a 3 kB head in two parts is answered with our JSON');

  const oneRead = await exchange(server.port, start + junk(16_000) + end);
  t.match(oneRead, /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*\{"errors":\[\{"title":/, 'a 16 kB head written at once is answered');
  t.equal(events.ended.length, 2, 'only the two answered requests reached the handler');
});

/** Writes `data` without half-closing (uWS closes on a client's FIN) and collects until the server closes. */
function exchangeOpen(port: number, data: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', () => {});
    s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    s.write(data);
  });
}

// uWS closes a connection on which a request arrives while the one before it still awaits its
// answer (HttpContext: "not ready for another request yet"), answering neither. A removal always
// answers later than it arrives, so HTTP pipelining behind one loses both; the removal sees its client
// leave and is refunded. Browsers, curl, python requests and node's http do not pipeline; some load
// generators can (autocannon -p).
t.test('a request pipelined behind a removal closes the connection: neither is answered, nothing charged', async (t) => {
  const { server, events, ledger, pool } = await startTestServer(t);
  const image = (await makeImage('png', 48, 32)).toString('base64');
  const body = JSON.stringify({ image_file_b64: image, size: 'preview' });
  const removal = (close: boolean) =>
    `POST /v1.0/removebg HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${close ? 'Connection: close\r\n' : ''}\r\n${body}`;
  const account = (close: boolean) => `GET /v1.0/account HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${KEY}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
  const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])); // a PNG body ends without a line break

  t.same(statuses(await exchangeOpen(server.port, removal(true))), [200], 'a removal alone is answered');
  t.same(
    statuses(await exchangeOpen(server.port, account(false) + removal(true))),
    [200, 200],
    'a removal pipelined behind an answered request: both answered',
  );

  const left = events.nextAbort('/v1.0/removebg');
  const ended = events.nextEnd('/v1.0/removebg');
  const before = { ...ledger.counts };
  // The fakes answer within the handler's own microtasks; the real pool answers later, as held here.
  const gate = pool.hold();
  t.equal(await exchangeOpen(server.port, removal(false) + account(true)), '', 'a request pipelined behind a removal: nothing written');
  await left;
  gate.release();
  t.ok((await ended).aborted, 'the removal ended as a client that left');
  t.equal(ledger.counts.reserve - before.reserve, 1, 'the removal had held its credit');
  t.equal(ledger.counts.refund - before.refund, 1, '... which was refunded');
  t.equal(ledger.counts.settle, before.settle, 'nothing settled for it');
});
