// type and type_level are validated and accepted, and X-Type is never sent (no classifier).
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('type and type_level', async (t) => {
  const { url } = await startTestServer(t);
  const img = await makeImage('png');
  for (const type of ['auto', 'person', 'product', 'car', 'animal', 'graphic', 'transportation']) {
    const res = await postImage(url, img, { type });
    t.equal(res.status, 200, type);
    t.equal(res.headers['x-type'], undefined);
  }
  for (const level of ['none', '1', '2', 'latest']) t.equal((await postImage(url, img, { type_level: level })).status, 200, level);
  t.equal(firstError(await postImage(url, img, { type: 'spaceship' })).code, 'invalid_type');
  t.equal(firstError(await postImage(url, img, { type_level: '9' })).code, 'invalid_type_level');
});
