// POST /v1.0/improve stores the image and tag under <data>/improve/ and returns {"id":"<uuid>"}.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { firstError, postJson, postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('improve', async (t) => {
  const { url, config } = await startTestServer(t);
  const png = await makeImage('png');
  const res = await postMultipart(
    url,
    [
      { name: 'image_file', value: png, filename: 'image_file' },
      { name: 'tag', value: 'hair' },
    ],
    {},
    '/v1.0/improve',
  );
  t.equal(res.status, 200);
  const body = res.json();
  t.same(Object.keys(body), ['id']);
  t.match(body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const dir = join(config.dataDir, 'improve');
  t.same(readFileSync(join(dir, `${body.id}.png`)), png);
  t.equal(JSON.parse(readFileSync(join(dir, `${body.id}.json`), 'utf8')).tag, 'hair');

  const b64 = await postJson(url, { image_file_b64: png.toString('base64'), image_filename: 'x.png' }, {}, '/v1.0/improve');
  t.equal(b64.status, 200);
  const none = await postJson(url, { tag: 'x' }, {}, '/v1.0/improve');
  t.equal(none.status, 400);
  t.equal(firstError(none).code, 'missing_source');
});
