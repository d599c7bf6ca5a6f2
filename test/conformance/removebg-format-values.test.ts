// format auto/png/jpg/webp/zip selects the Content-Type; other values → invalid_format.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('formats', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  const want: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', zip: 'application/zip', auto: 'image/png' };
  for (const [format, type] of Object.entries(want)) {
    const res = await postImage(url, img, { format });
    t.equal(res.status, 200, format);
    t.equal(res.headers['content-type'], type, format);
    t.equal(pool.tasks.at(-1)!.options.format, format);
  }
});

t.test('invalid format', async (t) => {
  const { url } = await startTestServer(t);
  const res = await postImage(url, await makeImage('png'), { format: 'gif' });
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'invalid_format');
});
