// A concurrency slot belongs to a request being worked on. A slow or stuck upload holds
// no slot of its key (the slot is taken once the body is in), and an upload slower than the minimum rate
// is answered 408 with a log line instead of being closed silently by uWS.
import net from 'node:net';
import t, { type Test } from 'tap';
import { postImage, postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { FakeLedger } from '../helpers/fake-ledger.js';
import { KEY, startTestServer } from '../helpers/server.js';
import type { Logger } from '../../src/http/server.js';

function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), error: (m) => lines.push(`ERROR ${m}`) };
}

/** A ledger with KEY at cap 1, and a promise for KEY's next authentication. */
function capOneLedger() {
  const ledger = new FakeLedger();
  ledger.addAccount(KEY, { concurrency: 1, credits: 10 });
  const authenticate = ledger.authenticate.bind(ledger);
  let authed: () => void = () => {};
  const nextAuth = () => new Promise<void>((r) => (authed = r));
  ledger.authenticate = async (key) => {
    const account = await authenticate(key);
    authed();
    return account;
  };
  return { ledger, nextAuth };
}

/** Headers and the start of a 100 kB multipart body on a raw socket, then nothing more. */
async function startUpload(url: string, path: string) {
  const sock = net.connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  let received = '';
  sock.on('data', (d) => (received += d.toString('latin1')));
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n` +
      '--b\r\nContent-Disposition: form-data; name="image_file"; filename="x"\r\n\r\nxxxxx',
  );
  return { sock, closed, received: () => received };
}

for (const path of ['/v1.0/removebg', '/v1.0/improve']) {
  t.test(`${path}: an upload in progress holds no slot; another request on the key (cap 1) is served`, async (t: Test) => {
    const { ledger, nextAuth } = capOneLedger();
    const { url, events, server } = await startTestServer(t, { ledger, config: { improveQuotaBytes: 10_000_000 } });
    const acct = ledger.accountOf(KEY)!;
    const authed = nextAuth();
    const upload = await startUpload(url, path);
    await authed;
    await new Promise((r) => setImmediate(r)); // the handler goes on to read the body
    t.equal(ledger.slotsInUse(acct.id), 0, 'the upload holds no slot');
    const image = await makeImage('png');
    const other =
      path === '/v1.0/removebg' ? await postImage(url, image) : await postMultipart(url, [{ name: 'image_file', filename: 'a.png', value: image }], {}, path);
    t.equal(other.status, 200, 'the key is not locked by the upload');
    t.equal(server.inflight, 1, 'the upload is still in flight');
    const ended = events.nextEnd(path);
    upload.sock.destroy();
    const info = await ended;
    t.equal(info.aborted, true);
    t.equal(ledger.slotsInUse(acct.id), 0);
    t.equal(ledger.counts.reserve, path === '/v1.0/removebg' ? 1 : 0, 'only the served request reserved');
  });
}

t.test('an upload slower than 16 kB/s over the window: 408, a log line, the connection closed, nothing held', async (t) => {
  const { ledger } = capOneLedger();
  const log = capturingLogger();
  // The deadline far away: the upload rule answers, not the request deadline.
  const { url, events, server } = await startTestServer(t, { ledger, log, config: { uploadWindowMs: 300, requestTimeoutMs: 60_000 } });
  const acct = ledger.accountOf(KEY)!;
  const ended = events.nextEnd('/v1.0/removebg');
  const upload = await startUpload(url, '/v1.0/removebg');
  await upload.closed;
  t.match(upload.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/);
  const body = JSON.parse(upload.received().slice(upload.received().indexOf('\r\n\r\n') + 4)) as { errors: Array<{ code: string; detail: string }> };
  t.equal(body.errors[0]!.code, 'request_timeout');
  t.match(body.errors[0]!.detail, /^The request body arrived too slowly: \d+ bytes in the last 0\.3 s \(at least 4916 are needed\)\.$/);
  const info = await ended;
  t.equal(info.status, 408, 'the request log has its line with the status');
  t.equal(info.timedOut, true);
  t.equal(ledger.slotsInUse(acct.id), 0);
  t.equal(ledger.counts.reserve, 0, 'never reserved');
  t.equal(server.inflight, 0);
  const lines = log.lines.filter((l) => l.startsWith('upload:'));
  t.equal(lines.length, 1);
  t.match(
    lines[0],
    /^upload: request #\d+ POST \/v1\.0\/removebg from \S+ sent its body slower than its minimum rate \(.+\); answered 408 and closed the connection$/,
  );
  t.same(
    log.lines.filter((l) => l.startsWith('deadline:')),
    [],
    'not the request deadline',
  );
});

t.test('a drip-fed upload (5 bytes at a time) past the window: 408, not a silent close', async (t) => {
  const { ledger } = capOneLedger();
  const { url } = await startTestServer(t, { ledger, log: capturingLogger(), config: { uploadWindowMs: 300, requestTimeoutMs: 60_000 } });
  const upload = await startUpload(url, '/v1.0/removebg');
  const drip = setInterval(() => upload.sock.writable && upload.sock.write('xxxxx'), 20);
  await upload.closed;
  clearInterval(drip);
  t.match(upload.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/);
  t.match(upload.received(), /"code":"request_timeout"/);
});
