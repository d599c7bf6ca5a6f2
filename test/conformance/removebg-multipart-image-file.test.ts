// POST /v1.0/removebg with a multipart image_file returns 200 and the image bytes with image/png.
import t from 'tap';
import { postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('multipart image_file with a real filename and type', async (t) => {
  const { url, pool } = await startTestServer(t);
  const png = await makeImage('png', 64, 48);
  const res = await postMultipart(url, [{ name: 'image_file', value: png, filename: 'photo.png', type: 'image/png' }]);
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'image/png');
  t.equal(res.headers['x-width'], '64');
  t.equal(res.headers['x-height'], '48');
  t.same(res.body, png, 'fake pool echoes the input: the bytes made the round trip intact');
  t.equal(pool.tasks.length, 1);
  t.equal(pool.tasks[0]!.options.size, 'preview', 'default size is preview');
});
