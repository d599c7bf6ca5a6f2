// bg_image_url is fetched into options.bgImage; a failed fetch → 400 failed_bg_download.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { startImageHost } from '../helpers/image-host.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('bg_image_url', async (t) => {
  const { url, pool } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const host = await startImageHost(t);
  const bg = await makeImage('jpeg', 20, 20);
  host.set('/bg.jpg', bg);
  const img = await makeImage('png');
  const ok = await postImage(url, img, { bg_image_url: `${host.url}/bg.jpg` });
  t.equal(ok.status, 200);
  t.same(Buffer.from(pool.tasks[0]!.options.bgImage!), bg);
  const bad = await postImage(url, img, { bg_image_url: `${host.url}/nope.jpg` });
  t.equal(bad.status, 400);
  t.equal(firstError(bad).code, 'failed_bg_download');
  t.match(firstError(bad).title, /HTTP Status 404/);
});
