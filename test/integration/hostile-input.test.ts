// Hostile requests get their documented 4xx and the server answers the next request.
import net from 'node:net';
import t from 'tap';
import { firstError, postImage, postMultipart } from '../helpers/api.js';
import { multipart, request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('bodies over the limit, with and without Content-Length', async (t) => {
  const { url, ledger } = await startTestServer(t, { config: { maxBodyBytes: 256 * 1024 } });
  const big = Buffer.alloc(1024 * 1024, 0x41);
  const withLen = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' }, body: big });
  t.equal(withLen.status, 413);
  t.equal(firstError(withLen).code, 'file_too_large');
  const chunked = await request(`${url}/v1.0/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' },
    body: big,
    chunked: true,
  });
  t.equal(chunked.status, 413);
  t.equal(firstError(chunked).code, 'file_too_large');
  t.equal(ledger.counts.reserve, 0);
  t.equal((await postImage(url, await makeImage('png'))).status, 200, 'still serving');
});

t.test('a 10 MB upload without Content-Length (chunked) within the limit', async (t) => {
  const { url, pool } = await startTestServer(t);
  const png = await makeImage('png');
  const padding = Buffer.alloc(10 * 1024 * 1024, 0x20);
  const { body, contentType } = multipart([
    { name: 'image_file', value: png, filename: 'image_file' },
    { name: 'padding', value: padding },
  ]);
  const res = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': contentType }, body, chunked: true });
  t.equal(res.status, 200);
  t.same(Buffer.from(pool.tasks[0]!.input), png);
});

t.test('malformed multipart boundary', async (t) => {
  const { url } = await startTestServer(t);
  const { body } = multipart([{ name: 'image_file', value: await makeImage('png'), filename: 'f' }], 'realboundary');
  const res = await request(`${url}/v1.0/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'multipart/form-data; boundary=otherboundary' },
    body,
  });
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'invalid_request_body');
  const noBoundary = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'multipart/form-data' }, body });
  t.equal(noBoundary.status, 400);
  const truncated = await request(`${url}/v1.0/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'multipart/form-data; boundary=realboundary' },
    body: body.subarray(0, 60),
  });
  t.equal(truncated.status, 400);
  t.equal((await postImage(url, await makeImage('png'))).status, 200);
});

t.test('invalid JSON', async (t) => {
  const { url } = await startTestServer(t);
  for (const body of ['{"image_url": ', '[]', 'null', '{"a":1}}']) {
    const res = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' }, body });
    t.equal(res.status, 400, body);
    t.equal(firstError(res).code, 'invalid_request_body');
  }
});

t.test('garbage image bytes', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const res = await postMultipart(url, [{ name: 'image_file', value: Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]), filename: 'image_file' }]);
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'invalid_file_type');
  const empty = await postMultipart(url, [{ name: 'image_file', value: Buffer.alloc(0), filename: 'image_file' }]);
  t.equal(empty.status, 400);
  t.equal(firstError(empty).code, 'invalid_file_type', 'a named file of 0 bytes was sent: refused as empty, not "no image given"');
  t.equal(ledger.counts.reserve, 0);
});

t.test('unsupported content type and invalid Content-Length', async (t) => {
  const { url } = await startTestServer(t);
  const res = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'text/plain' }, body: 'hello' });
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'invalid_request_body');
  // A raw request with a nonsense header block: uWS answers or closes; either way the server lives.
  const { port } = new URL(url);
  await new Promise<void>((resolve) => {
    const s = net.connect(Number(port), '127.0.0.1', () => s.end('POST /v1.0/removebg HTTP/1.1\r\nContent-Length: banana\r\n\r\n'));
    s.on('data', () => {});
    s.on('close', () => resolve());
    s.on('error', () => resolve());
  });
  t.equal((await request(`${url}/healthz`)).status, 200);
});
