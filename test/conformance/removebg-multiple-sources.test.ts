// Two image sources → 400 multiple_sources.
import t from 'tap';
import { firstError, postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('image_file + image_url', async (t) => {
  const { url } = await startTestServer(t);
  const png = await makeImage('png');
  const res = await postMultipart(url, [
    { name: 'image_file', value: png, filename: 'a.png' },
    { name: 'image_url', value: 'https://example.com/a.jpg' },
  ]);
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'multiple_sources');
  const res2 = await postMultipart(url, [
    { name: 'image_file', value: png, filename: 'a.png' },
    { name: 'image_file_b64', value: png.toString('base64') },
  ]);
  t.equal(firstError(res2).code, 'multiple_sources');
});
