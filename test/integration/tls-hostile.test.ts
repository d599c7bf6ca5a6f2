// The HTTPS port under hostile handshakes: nothing sent, plain HTTP, garbage, a ClientHello cut short,
// an SSLv2 hello, and 500 connections stalled mid-handshake at once. Each is closed by the server
// (uSockets' idle timeout ends a handshake that stalls, ~10 s), none is answered in plain HTTP, and a
// real HTTPS request made while they are open, and one after, gets its 200. Probed by hand first
// (3000 stalled handshakes: the healthz still answered); this keeps it so.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { startTestServer } from '../helpers/server.js';
import { makeSelfSigned } from '../helpers/tls-files.js';

/** Longer than the ~10 s idle timeout: a connection still open then is held by the server. */
const HELD_MS = 30_000;

interface Outcome {
  /** The server closed it (false: still open after HELD_MS, closed by us). */
  closedByServer: boolean;
  received: Buffer;
}

function rawExchange(port: number, bytes: Buffer | null): Promise<Outcome> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    s.on('data', (d: Buffer) => got.push(d));
    s.on('error', () => {}); // a reset is a close too
    const held = setTimeout(() => {
      s.destroy();
      resolve({ closedByServer: false, received: Buffer.concat(got) });
    }, HELD_MS);
    s.on('close', () => {
      clearTimeout(held);
      resolve({ closedByServer: true, received: Buffer.concat(got) });
    });
    if (bytes) s.write(bytes);
  });
}

// A TLS 1.2 ClientHello record header and the start of its body, then nothing.
const HALF_HELLO = Buffer.from(`16030100a5010000a10303${'00'.repeat(32)}`, 'hex');
const SSLV2_HELLO = Buffer.from('802b0103010012000000100000', 'hex');

t.test('hostile handshakes are closed, never answered in plain text, and do not block real clients', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cutout-tls-hostile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { cert, key } = makeSelfSigned(dir);
  const { url, server } = await startTestServer(t, { config: { tlsCert: cert, tlsKey: key } });
  const ca = readFileSync(cert);
  const port = server.port;

  const cases: Array<[string, Buffer | null]> = [
    ['nothing sent', null],
    ['plain HTTP', Buffer.from('GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n')],
    ['garbage', Buffer.from('\x00\x01\x02 not a TLS record\r\n\r\n')],
    ['a ClientHello cut short', HALF_HELLO],
    ['an SSLv2 hello', SSLV2_HELLO],
  ];
  const stalled = Array.from({ length: 500 }, () => rawExchange(port, HALF_HELLO));
  const hostile = cases.map(([, bytes]) => rawExchange(port, bytes));
  const during = await request(`${url}/healthz`, { ca });
  t.equal(during.status, 200, 'a real HTTPS request while they are open');

  const outcomes = await Promise.all(hostile);
  cases.forEach(([what], i) => {
    const o = outcomes[i]!;
    t.ok(o.closedByServer, `${what}: closed by the server`);
    t.notMatch(o.received.toString('latin1'), /HTTP\//, `${what}: no plain-HTTP answer`);
    // Whatever came back is TLS: at most an alert record (content type 21).
    if (o.received.length > 0) t.equal(o.received[0], 0x15, `${what}: a TLS alert`);
  });
  const flood = await Promise.all(stalled);
  t.equal(flood.filter((o) => o.closedByServer).length, 500, '500 stalled handshakes: every one closed by the server');
  t.equal(flood.filter((o) => o.received.length > 0 && o.received[0] !== 0x15).length, 0, 'nothing but alerts sent to them');

  const after = await request(`${url}/healthz`, { ca });
  t.equal(after.status, 200, 'and one after');
});
