// size accepts preview/small/regular/medium/hd/full/4k/50MP/auto; the ledger's tier reaches the worker; others → invalid_size.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('every documented value and alias', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  const want: Record<string, string> = {
    preview: 'preview',
    small: 'preview',
    regular: 'preview',
    medium: 'medium',
    hd: 'hd',
    full: 'full',
    '4k': 'full',
    '50MP': '50MP',
    auto: 'full',
  };
  for (const [size, tier] of Object.entries(want)) {
    const res = await postImage(url, img, { size });
    t.equal(res.status, 200, size);
    t.equal(pool.tasks.at(-1)!.options.size, tier, `${size} → ${tier}`);
  }
});

t.test('unknown size', async (t) => {
  const { url, pool } = await startTestServer(t);
  const res = await postImage(url, await makeImage('png'), { size: 'gigantic' });
  t.equal(res.status, 400);
  t.match(res.headers['content-type'], 'application/json');
  const e = firstError(res);
  t.equal(e.code, 'invalid_size');
  t.equal(e.title, "Invalid value for parameter 'size'");
  t.equal(pool.tasks.length, 0);
});
