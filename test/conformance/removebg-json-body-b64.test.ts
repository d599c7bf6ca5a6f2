// application/json bodies with image_file_b64 and JSON booleans (npm remove.bg) are accepted.
import t from 'tap';
import { postJson } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('JSON body, JSON booleans and numbers', async (t) => {
  const { url, pool } = await startTestServer(t);
  const png = await makeImage('png');
  const res = await postJson(url, {
    image_file_b64: png.toString('base64'),
    size: 'full',
    crop: true,
    semitransparency: false,
    type_level: 2,
    shadow_opacity: 50,
  });
  t.equal(res.status, 200);
  t.same(res.body, png);
  t.equal(pool.tasks[0]!.options.crop, true);
  t.equal(pool.tasks[0]!.options.size, 'full');
});

t.test('JSON null means not given', async (t) => {
  const { url } = await startTestServer(t);
  const res = await postJson(url, { image_file_b64: (await makeImage('png')).toString('base64'), bg_color: null, size: null });
  t.equal(res.status, 200);
});
