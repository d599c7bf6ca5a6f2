// bg_image_file bytes reach the worker as options.bgImage; a non-image bg → 400 invalid_file_type.
import t from 'tap';
import { firstError, postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('bg_image_file', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  const bg = await makeImage('jpeg', 32, 32);
  const res = await postMultipart(url, [
    { name: 'image_file', value: img, filename: 'image_file' },
    { name: 'bg_image_file', value: bg, filename: 'bg_image_file' },
  ]);
  t.equal(res.status, 200);
  t.same(Buffer.from(pool.tasks[0]!.options.bgImage!), bg);
  const bad = await postMultipart(url, [
    { name: 'image_file', value: img, filename: 'image_file' },
    { name: 'bg_image_file', value: Buffer.from('GIF89a......'), filename: 'bg.gif' },
  ]);
  t.equal(bad.status, 400);
  t.equal(firstError(bad).code, 'invalid_file_type');
  t.match(firstError(bad).detail, /bg_image_file/);
});
