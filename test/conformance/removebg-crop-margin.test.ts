// crop and crop_margin (1/2/4 values in px or %, ≤500px/≤50%) reach the worker; bad margins → invalid_crop_margin.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('crop with margins', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  t.equal((await postImage(url, img, { crop: 'true', crop_margin: '10px 20%' })).status, 200);
  const m = pool.tasks.at(-1)!.options.cropMargin!;
  t.same(
    [m.top, m.right, m.bottom, m.left],
    [
      { value: 10, unit: 'px' },
      { value: 20, unit: '%' },
      { value: 10, unit: 'px' },
      { value: 20, unit: '%' },
    ],
  );
  t.equal(pool.tasks.at(-1)!.options.crop, true);
  t.equal((await postImage(url, img, { crop: 'true', crop_margin: '1px 2px 3px 4px' })).status, 200);
  t.equal((await postImage(url, img, { crop: 'true', crop_margin: '500px' })).status, 200);
});

t.test('invalid margins', async (t) => {
  const { url } = await startTestServer(t);
  const img = await makeImage('png');
  for (const v of ['501px', '60%', '1px 2px 3px', 'wide']) {
    const res = await postImage(url, img, { crop: 'true', crop_margin: v });
    t.equal(res.status, 400, v);
    t.equal(firstError(res).code, 'invalid_crop_margin', v);
  }
});

t.test('crop=false leaves the margin out', async (t) => {
  const { url, pool } = await startTestServer(t);
  t.equal((await postImage(url, await makeImage('png'), { crop_margin: '10px' })).status, 200);
  t.equal(pool.tasks.at(-1)!.options.cropMargin, undefined);
});
