// Client disconnects mid-upload and mid-inference: slot freed, credits refunded, next request served.
import http from 'node:http';
import net from 'node:net';
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { multipart } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('abort mid-upload', async (t) => {
  const { url, ledger, events, server } = await startTestServer(t);
  const acct = ledger.accountOf(KEY)!;
  const { port } = new URL(url);
  const aborted = events.nextAbort('/v1.0/removebg');
  const ended = events.nextEnd('/v1.0/removebg');
  const sock = net.connect(Number(port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000\r\n\r\n--b\r\nContent-Disposition: form-data; name="image_file"; filename="x"\r\n\r\n` +
      'x'.repeat(5000),
  );
  // Let the server see the headers (it registers the request) before we vanish.
  await new Promise<void>((resolve) => {
    const poll = () => (server.inflight > 0 ? resolve() : setImmediate(poll));
    poll();
  });
  sock.destroy();
  const info = await aborted;
  t.equal(info.aborted, true);
  await ended;
  t.equal(ledger.slotsInUse(acct.id), 0, 'slot freed');
  t.equal(ledger.counts.reserve, 0, 'never reserved');
  t.equal(server.inflight, 0);
  t.equal((await postImage(url, await makeImage('png'))).status, 200, 'next request served');
});

t.test('abort mid-inference', async (t) => {
  const { url, ledger, pool, events, server } = await startTestServer(t);
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const gate = pool.hold();
  const { body, contentType } = multipart([{ name: 'image_file', value: await makeImage('png'), filename: 'image_file' }]);
  const req = http.request(`${url}/v1.0/removebg`, {
    method: 'POST',
    agent: false,
    headers: { 'X-Api-Key': KEY, 'Content-Type': contentType, 'Content-Length': body.length },
  });
  req.on('error', () => {}); // we are about to destroy it
  req.end(body);
  await gate.started;
  t.equal(ledger.balancesNow(acct.id).total, before - 1, 'credit held while running');
  t.equal(ledger.slotsInUse(acct.id), 1);
  const aborted = events.nextAbort('/v1.0/removebg');
  const ended = events.nextEnd('/v1.0/removebg');
  req.destroy();
  await aborted;
  gate.release(); // the "worker" finishes after the client left: result dropped
  const info = await ended;
  t.equal(info.status, 0, 'nothing was written');
  t.equal(ledger.balancesNow(acct.id).total, before, 'credit refunded');
  t.equal(ledger.counts.refund, 1);
  t.equal(ledger.counts.settle, 0);
  t.equal(ledger.outstanding(), 0);
  t.equal(ledger.slotsInUse(acct.id), 0, 'slot freed');
  t.equal(server.inflight, 0);
  t.equal((await postImage(url, await makeImage('png'))).status, 200, 'next request served');
});

t.test('abort while waiting for an image_url download', async (t) => {
  const { url, ledger, events } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const acct = ledger.accountOf(KEY)!;
  // A remote that never answers.
  const sockets = new Set<net.Socket>();
  const hang = net.createServer((s) => void sockets.add(s));
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        hang.close(() => r());
      }),
  );
  const hangPort = (hang.address() as net.AddressInfo).port;
  const connected = new Promise((r) => hang.once('connection', r));
  const payload = JSON.stringify({ image_url: `http://127.0.0.1:${hangPort}/slow.jpg` });
  const req = http.request(`${url}/v1.0/removebg`, {
    method: 'POST',
    agent: false,
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
  });
  req.on('error', () => {});
  req.end(payload);
  await connected;
  const ended = events.nextEnd('/v1.0/removebg');
  req.destroy();
  await ended;
  t.equal(ledger.slotsInUse(acct.id), 0);
  t.equal(ledger.counts.reserve, 0);
});
