// The per-process cap on request-body bytes in memory answers 503 service_busy + Retry-After before a body is read, on every endpoint; the bytes come back when a request is answered.
import t from 'tap';
import { firstError, postJson } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { startImageHost } from '../helpers/image-host.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('a body that would pass the cap waits for nothing: 503, nothing charged, then served once bytes are back', async (t) => {
  const { url, ledger } = await startTestServer(t, {
    config: { maxBodyBytes: 64 * 1024, bodyMemoryBytes: 64 * 1024 },
    fetchOptions: { allowLoopback: true },
  });
  const host = await startImageHost(t);
  const png = await makeImage('png');
  let reached!: () => void;
  const holding = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  host.set('/held.png', (_req, res) => {
    reached();
    void released.then(() => res.writeHead(200, { 'Content-Type': 'image/png' }).end(png));
  });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;

  // 40 KB of JSON (whitespace pads it) held in memory while its image_url download waits.
  const padded = (value: object, size: number) => {
    const json = JSON.stringify(value);
    return json.slice(0, -1) + ' '.repeat(size - json.length) + '}';
  };
  const body = padded({ image_url: `${host.url}/held.png` }, 40 * 1024);
  const held = request(`${url}/v1.0/improve`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' }, body });
  await holding;

  const b64 = png.toString('base64');
  for (const path of ['/v1.0/removebg', '/v1.0/improve']) {
    const res = await request(`${url}${path}`, {
      method: 'POST',
      headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' },
      body: padded({ image_file_b64: b64 }, 30 * 1024),
    });
    t.equal(res.status, 503, path);
    t.equal(firstError(res).code, 'service_busy', path);
    t.match(firstError(res).detail, /Too many request bodies in memory/);
    t.equal(res.headers['retry-after'], '1');
  }
  t.equal(ledger.counts.reserve, 0, 'nothing reserved');
  t.equal(ledger.balancesNow(acct.id).total, before, 'nothing charged');
  // A small body still fits beside the held one.
  t.equal((await postJson(url, { image_file_b64: b64 })).status, 200, 'small body fits');

  release();
  t.equal((await held).status, 200);
  const again = await request(`${url}/v1.0/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' },
    body: padded({ image_file_b64: b64 }, 30 * 1024),
  });
  t.equal(again.status, 200, 'the bytes came back when the held request was answered');
});

// A downloaded image waits in the queue like an uploaded one, so its bytes count against the same
// budget from the moment they are known (http/context.ts holdInput, fetch/image-url.ts hold).
t.test('image_url downloads count against the same budget: 503 when they cannot fit, bytes back after the answer', async (t) => {
  const MB = 1024 * 1024;
  const { url, ledger } = await startTestServer(t, {
    config: { maxBodyBytes: 64 * 1024, bodyMemoryBytes: MB + 64 * 1024 },
    fetchOptions: { allowLoopback: true },
  });
  const host = await startImageHost(t);
  const png = await makeImage('png');
  // A PNG's signature then padding: it would be accepted as an image if it were ever held.
  const big = Buffer.concat([png, Buffer.alloc(2 * MB - png.length)]);
  host.set('/declared.png', (_req, res) => res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(big.length) }).end(big));
  host.set('/chunked.png', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'image/png' }); // no Content-Length: counted as it grows
    for (let i = 0; i < big.length; i += 64 * 1024) res.write(big.subarray(i, i + 64 * 1024));
    res.end();
  });
  // 700 KB (the PNG, then bytes after its end, which decoders ignore), without Content-Length.
  const mid = Buffer.concat([png, Buffer.alloc(700 * 1024 - png.length)]);
  host.set('/mid-chunked.png', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'image/png' });
    for (let i = 0; i < mid.length; i += 64 * 1024) res.write(mid.subarray(i, i + 64 * 1024));
    res.end();
  });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;

  for (const path of ['/declared.png', '/chunked.png']) {
    const res = await postJson(url, { image_url: `${host.url}${path}` });
    t.equal(res.status, 503, path);
    t.equal(firstError(res).code, 'service_busy', path);
    t.match(firstError(res).detail, /Too many request bodies in memory \(.* of 1\.1MB held\)/, path);
    t.equal(res.headers['retry-after'], '1', path);
  }
  t.equal(ledger.counts.reserve, 0, 'nothing reserved');
  t.equal(ledger.balancesNow(acct.id).total, before, 'nothing charged');

  // Two 700 KB downloads do not fit at once: the second in a row fits only if the first gave its bytes back.
  for (let i = 0; i < 3; i++) t.equal((await postJson(url, { image_url: `${host.url}/mid-chunked.png` })).status, 200, `700 KB download ${i + 1}`);
  t.equal(ledger.balancesNow(acct.id).total, before - 3, 'three charged');
});
