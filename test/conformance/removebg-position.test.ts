// position accepts original, center, N% and N% M%; others → invalid_position.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('position', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  const want: Record<string, unknown> = { original: undefined, center: { x: 50, y: 50 }, '25%': { x: 25, y: 25 }, '0% 100%': { x: 0, y: 100 } };
  for (const [v, pos] of Object.entries(want)) {
    t.equal((await postImage(url, img, { position: v })).status, 200, v);
    t.same(pool.tasks.at(-1)!.options.position, pos, v);
  }
  for (const v of ['top', '120%', '10px']) {
    const res = await postImage(url, img, { position: v });
    t.equal(res.status, 400, v);
    t.equal(firstError(res).code, 'invalid_position');
  }
});
