// roi "x1 y1 x2 y2" in px or % (unitless 0 accepted, as the PyPI client sends); bad → invalid_roi / roi_region_empty.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('roi', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  t.equal((await postImage(url, img, { roi: '0 0 100% 100%' })).status, 200);
  t.same(pool.tasks.at(-1)!.options.roi, {
    x1: { value: 0, unit: 'px' },
    y1: { value: 0, unit: 'px' },
    x2: { value: 100, unit: '%' },
    y2: { value: 100, unit: '%' },
  });
  t.equal((await postImage(url, img, { roi: '10px 10px 40px 30px' })).status, 200);
  const bad = await postImage(url, img, { roi: '0 0 100%' });
  t.equal(bad.status, 400);
  t.equal(firstError(bad).code, 'invalid_roi');
  const empty = await postImage(url, img, { roi: '50% 0% 50% 100%' });
  t.equal(empty.status, 400);
  t.equal(firstError(empty).code, 'roi_region_empty');
});
