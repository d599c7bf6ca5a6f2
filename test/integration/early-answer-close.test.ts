// An answer given before the request body is in (404, 405, a preflight, a bad key) on a connection
// the client asked to close (`Connection: close`): uWS closes right after the answer, and bytes still
// on their way then reset the connection, so a client still writing its body (node, python-requests)
// lost the answer to EPIPE/ECONNRESET (bench:faults --faults fuzz-http seed 101, an OPTIONS with a body). The answer
// now waits for the rest of the body (dropped unread), up to 5 s. Keep-alive requests, clients that
// sent `Expect: 100-continue`, and declared bodies over the limit are still answered at once.
// Such an answer counts as in flight until it is written, so a shutdown drains it.
import net from 'node:net';
import t from 'tap';
import { KEY, startTestServer } from '../helpers/server.js';

interface Upload {
  status: string;
  /** Body bytes written when the first byte of the answer arrived. */
  answeredAfter: number;
  written: number;
  writeError: string | null;
}

/**
 * Writes the head, then the body in 2 kB pieces 5 ms apart; `holdAfterFirst`: after the first piece,
 * waits up to that long for an answer before writing the rest; `stall`: never writes the rest.
 */
function upload(port: number, head: string, bodyBytes: number, opts: { holdAfterFirst?: number; stall?: boolean } = {}): Promise<Upload> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    let written = 0;
    let answeredAfter = -1;
    let writeError: string | null = null;
    let answered: () => void = () => {};
    s.on('data', (d: Buffer) => {
      if (answeredAfter < 0) answeredAfter = written;
      got.push(d);
      answered();
    });
    s.on('error', (e: NodeJS.ErrnoException) => (writeError = e.code ?? e.message));
    s.on('close', () => resolve({ status: Buffer.concat(got).toString('latin1').split('\r\n')[0]!, answeredAfter, written, writeError }));
    const safety = setTimeout(() => s.destroy(), 20_000);
    s.on('close', () => clearTimeout(safety));
    s.write(head);
    const piece = Buffer.alloc(2048, 0x61);
    const next = async (): Promise<void> => {
      if (s.destroyed || written >= bodyBytes) return;
      const n = Math.min(piece.length, bodyBytes - written);
      s.write(piece.subarray(0, n));
      written += n;
      if (written === n && opts.stall) return;
      if (written === n && opts.holdAfterFirst) await new Promise<void>((r) => ((answered = r), setTimeout(r, opts.holdAfterFirst)));
      setTimeout(() => void next(), 5);
    };
    void next();
  });
}

const BODY = 20_000;
const head = (method: string, path: string, extra = '', length = BODY) =>
  `${method} ${path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\n${extra}\r\n`;

t.test('Connection: close: the early answer comes after the whole body, and nothing is reset', async (t) => {
  const { server } = await startTestServer(t);
  const cases: Array<[string, string, string, RegExp]> = [
    ['OPTIONS', '/v1.0/removebg', '', /^HTTP\/1\.1 204 /],
    ['POST', '/nowhere', '', /^HTTP\/1\.1 404 /],
    ['PUT', '/v1.0/removebg', '', /^HTTP\/1\.1 405 /],
    ['POST', '/v1.0/removebg', 'X-Api-Key: not-a-key\r\n', /^HTTP\/1\.1 403 /],
    ['POST', '/v1.0/removebg', '', /^HTTP\/1\.1 403 /],
  ];
  for (const [method, path, extra, status] of cases) {
    for (const connection of ['Connection: close\r\n', 'Connection: Close\r\n']) {
      const r = await upload(server.port, head(method, path, extra + connection), BODY);
      const what = `${method} ${path} ${extra.trim()} ${connection.trim()}`;
      t.match(r.status, status, `${what}: answered`);
      t.equal(r.answeredAfter, BODY, `${what}: after the last body byte was written`);
      t.equal(r.writeError, null, `${what}: no EPIPE/ECONNRESET`);
    }
  }
});

t.test('still at once: keep-alive, Expect: 100-continue, a declared body over the limit', async (t) => {
  const { server } = await startTestServer(t, { config: { maxBodyBytes: 100_000 } });
  const keepAlive = await upload(server.port, head('POST', '/v1.0/removebg', 'X-Api-Key: not-a-key\r\n'), BODY, { holdAfterFirst: 3_000 });
  t.match(keepAlive.status, /^HTTP\/1\.1 403 /);
  t.equal(keepAlive.answeredAfter, 2048, 'keep-alive: after the first piece (uWS skips the rest of the body)');

  const expecting = await upload(server.port, head('POST', '/v1.0/removebg', 'X-Api-Key: not-a-key\r\nExpect: 100-continue\r\nConnection: close\r\n'), BODY, {
    holdAfterFirst: 3_000,
  });
  t.match(expecting.status, /^HTTP\/1\.1 100 Continue/, 'uWS sends 100 itself');
  t.ok(expecting.answeredAfter <= 2048, 'Expect: 100-continue: the client reads an early answer');

  const tooBig = await upload(server.port, head('POST', '/v1.0/removebg', `X-Api-Key: ${KEY}\r\nConnection: close\r\n`, 500_000), 500_000, {
    holdAfterFirst: 3_000,
  });
  t.match(tooBig.status, /^HTTP\/1\.1 413 /);
  t.equal(tooBig.answeredAfter, 2048, 'over the limit: not read');
});

t.test('a client that stops sending still gets the answer (the wait is bounded)', async (t) => {
  const { server } = await startTestServer(t);
  // Without the bound nothing would come before the client's own 20 s give-up, and no status.
  const r = await upload(server.port, head('POST', '/nowhere', 'Connection: close\r\n'), BODY, { stall: true });
  t.match(r.status, /^HTTP\/1\.1 404 /);
  t.equal(r.written, 2048, 'with the body never finished');
});

t.test('an answer waiting for its body is in flight: a shutdown drains it, and it arrives', async (t) => {
  const { server } = await startTestServer(t);
  let inflightWhileWaiting = -1;
  let closed: Promise<void> | null = null;
  // The handler has answered 404 by the time the first piece is in; the answer waits for the rest.
  setTimeout(() => {
    inflightWhileWaiting = server.inflight;
    closed = server.close();
  }, 500);
  const r = await upload(server.port, head('POST', '/nowhere', 'Connection: close\r\n'), BODY, { holdAfterFirst: 1_500 });
  await closed;
  t.equal(inflightWhileWaiting, 1, 'counted in flight until it is written');
  t.match(r.status, /^HTTP\/1\.1 404 /, 'the drain let it finish');
  t.equal(r.answeredAfter, BODY, 'after the whole body');
  t.equal(r.writeError, null);
});
