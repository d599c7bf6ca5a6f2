// image_url is fetched; a failed fetch → 400 failed_image_download titled "Failed to download image from given image_url: HTTP Status 404".
import t from 'tap';
import { firstError, postJson } from '../helpers/api.js';
import { startImageHost } from '../helpers/image-host.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('fetches the image', async (t) => {
  const { url, pool } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const host = await startImageHost(t);
  const png = await makeImage('png', 40, 30);
  host.set('/cat.png', png);
  const res = await postJson(url, { image_url: `${host.url}/cat.png`, size: 'auto' });
  t.equal(res.status, 200);
  t.equal(res.headers['x-width'], '40');
  t.same(Buffer.from(pool.tasks[0]!.input), png);
});

t.test('HTTP 404', async (t) => {
  const { url, ledger } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const host = await startImageHost(t);
  const res = await postJson(url, { image_url: `${host.url}/missing.jpg` });
  t.equal(res.status, 400);
  const e = firstError(res);
  t.equal(e.code, 'failed_image_download');
  t.equal(e.title, 'Failed to download image from given image_url: HTTP Status 404');
  t.equal(ledger.counts.reserve, 0, 'nothing charged for a failed download');
});

t.test('not an image', async (t) => {
  const { url } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const host = await startImageHost(t);
  host.set('/page', (_req, res) => void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>hi</html>'));
  const res = await postJson(url, { image_url: `${host.url}/page` });
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'invalid_file_type');
  t.equal(firstError(res).detail, 'Expected jpg/png/webp, received html');
});

t.test('invalid URL', async (t) => {
  const { url } = await startTestServer(t);
  const res = await postJson(url, { image_url: 'file:///etc/passwd' });
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'invalid_image_url');
});
