// More than one of bg_color/bg_image_url/bg_image_file → 400 multiple_bg_sources.
import t from 'tap';
import { firstError, postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('two background sources', async (t) => {
  const { url } = await startTestServer(t);
  const png = await makeImage('png');
  const res = await postMultipart(url, [
    { name: 'image_file', value: png, filename: 'a.png' },
    { name: 'bg_color', value: 'fff' },
    { name: 'bg_image_file', value: png, filename: 'bg.png' },
  ]);
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'multiple_bg_sources');
  const res2 = await postMultipart(url, [
    { name: 'image_file', value: png, filename: 'a.png' },
    { name: 'bg_color', value: 'fff' },
    { name: 'bg_image_url', value: 'https://example.com/bg.jpg' },
  ]);
  t.equal(firstError(res2).code, 'multiple_bg_sources');
});
