// channels rgba/alpha reach the worker; other values → invalid_channels with remove.bg's title.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('channels', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  for (const c of ['rgba', 'alpha']) {
    t.equal((await postImage(url, img, { channels: c })).status, 200);
    t.equal(pool.tasks.at(-1)!.options.channels, c);
  }
  const bad = await postImage(url, img, { channels: 'rgb' });
  t.equal(bad.status, 400);
  t.same(firstError(bad).code, 'invalid_channels');
  t.same(firstError(bad).title, "Invalid value for parameter 'channels'");
});
