// A body or image over the limit → 413 file_too_large "File too large" before any work; the server keeps serving.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('declared Content-Length over the limit', async (t) => {
  const { url, ledger } = await startTestServer(t, { config: { maxBodyBytes: 64 * 1024 } });
  const res = await request(`${url}/v1.0/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/octet-stream' },
    body: Buffer.alloc(200 * 1024),
  });
  t.equal(res.status, 413);
  t.equal(firstError(res).code, 'file_too_large');
  t.equal(firstError(res).title, 'File too large');
  t.match(firstError(res).detail, /exceeds limit of/);
  t.equal(ledger.counts.reserve, 0);
  t.equal((await postImage(url, await makeImage('png'))).status, 200, 'next request served');
});

t.test('an image over 22MB inside an allowed body', async (t) => {
  const { url } = await startTestServer(t, { config: { maxImageBytes: 1024 } });
  const res = await postImage(url, await makeImage('png', 200, 200));
  t.equal(res.status, 413);
  t.equal(firstError(res).code, 'file_too_large');
});
