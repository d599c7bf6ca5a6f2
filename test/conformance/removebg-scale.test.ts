// scale accepts 10%..100% or original; others → invalid_scale.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('scale', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  t.equal((await postImage(url, img, { scale: '50%' })).status, 200);
  t.equal(pool.tasks.at(-1)!.options.scale, 0.5);
  t.equal((await postImage(url, img, { scale: 'original' })).status, 200);
  t.equal(pool.tasks.at(-1)!.options.scale, undefined);
  for (const v of ['5%', '150%', '0.5']) {
    const res = await postImage(url, img, { scale: v });
    t.equal(res.status, 400, v);
    t.equal(firstError(res).code, 'invalid_scale');
  }
});
