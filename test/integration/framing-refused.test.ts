// Ambiguous request framing (repeated Content-Length, odd Transfer-Encoding) gets 400 and a closed connection; a request pipelined behind it never runs and nothing is charged.
import net from 'node:net';
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

/** Write raw bytes on one connection; resolve with everything the server sent before it closed. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let got = '';
    const s = net.connect(Number(port), '127.0.0.1', () => s.write(bytes));
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(got) : reject(err)));
    s.on('close', () => resolve(got));
  });
}

const statusLines = (raw: string) => raw.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? [];

t.test('two Content-Length values: 400, closed, and the smuggled request behind it never runs', async (t) => {
  const { url, ledger, pool } = await startTestServer(t);
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id);
  const smuggledBody = JSON.stringify({ image_file_b64: (await makeImage('png')).toString('base64') });
  const smuggled =
    `POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${smuggledBody.length}\r\n\r\n${smuggledBody}`;
  // A proxy honouring the second Content-Length sees one request; uWS takes the first (0) and would read
  // the "body" as a second request.
  const raw = await rawExchange(
    url,
    `POST /v1.0/account HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
  );
  t.same(statusLines(raw), ['HTTP/1.1 400 Bad Request'], 'one answer only');
  t.match(raw, /\r\nConnection: close\r\n/i);
  t.match(raw, /\r\nContent-Type: application\/json; charset=utf-8\r\n/);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  t.same(body, {
    errors: [{ title: 'Invalid request body', code: 'invalid_request_body', detail: `Conflicting Content-Length headers (0, ${smuggled.length}).` }],
  });
  t.equal(pool.tasks.length, 0, 'the smuggled removal never reached the pool');
  t.equal(ledger.counts.reserve, 0);
  t.same(ledger.balancesNow(acct.id), before, 'balance unchanged');
  t.equal((await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY } })).status, 200, 'the next connection is served');
});

t.test('other ambiguous framings are refused the same way; a repeated equal length is fine', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const head = `POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Type: application/json\r\n`;
  const cases: Record<string, [string, RegExp]> = {
    'Transfer-Encoding: identity': [`${head}Transfer-Encoding: identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, /Unsupported Transfer-Encoding/],
    'Transfer-Encoding: gzip, chunked': [`${head}Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, /Unsupported Transfer-Encoding/],
    'two Host headers': [`${head}Host: y\r\nContent-Length: 2\r\n\r\n{}`, /More than one Host/],
  };
  for (const [label, [bytes, detail]] of Object.entries(cases)) {
    const raw = await rawExchange(url, bytes);
    t.same(statusLines(raw), ['HTTP/1.1 400 Bad Request'], label);
    t.match(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).errors[0], { code: 'invalid_request_body', detail }, label);
  }
  // uWS 20.30 closes these itself, without an answer (the second after our refusal, whose 400 it drops).
  t.equal(await rawExchange(url, `${head}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`), '', 'Content-Length with chunked');
  t.equal(await rawExchange(url, `${head}Content-Length: 2x\r\n\r\n{}`), '', 'a non-numeric Content-Length');
  const same = await rawExchange(url, `${head}Content-Length: 2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
  t.same(statusLines(same), ['HTTP/1.1 400 Bad Request'], 'read normally');
  t.match(same, /missing_source/, 'the body was parsed: {} has no image');
  t.equal(ledger.counts.reserve, 0);
});
