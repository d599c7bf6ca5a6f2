// semitransparency, add_shadow, shadow_type(+[type]), shadow_opacity(+[type]), shadow_method: valid values answer 200, bad ones their invalid_<name>.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('accepted values', async (t) => {
  const { url } = await startTestServer(t);
  const img = await makeImage('png');
  const ok: Array<Record<string, string>> = [
    { semitransparency: 'false' },
    { add_shadow: 'true' },
    { shadow_type: '3D' },
    { shadow_type: 'drop' },
    { shadow_type: 'auto' },
    { 'shadow_type[car]': 'car', 'shadow_opacity[car]': '90' },
    { shadow_opacity: 'auto' },
    { shadow_opacity: '0' },
    { shadow_method: 'legacy' },
    { shadow_method: 'latest' },
  ];
  for (const fields of ok) t.equal((await postImage(url, img, fields)).status, 200, JSON.stringify(fields));
});

t.test('rejected values', async (t) => {
  const { url } = await startTestServer(t);
  const img = await makeImage('png');
  const bad: Array<[Record<string, string>, string]> = [
    [{ semitransparency: 'sometimes' }, 'invalid_semitransparency'],
    [{ add_shadow: 'yes' }, 'invalid_add_shadow'],
    [{ shadow_type: 'long' }, 'invalid_shadow_type'],
    [{ shadow_opacity: '101' }, 'invalid_shadow_opacity'],
    [{ 'shadow_opacity[person]': 'x' }, 'invalid_shadow_opacity'],
    [{ shadow_opacity: '-1' }, 'invalid_shadow_opacity'],
    [{ shadow_opacity: '50.5' }, 'invalid_shadow_opacity'],
    [{ shadow_opacity: '1e2' }, 'invalid_shadow_opacity'],
    [{ shadow_opacity: '99999999999999999999' }, 'invalid_shadow_opacity'],
    [{ 'shadow_opacity[car]': '200' }, 'invalid_shadow_opacity'],
    [{ 'shadow_type[car]': 'sideways' }, 'invalid_shadow_type'],
    [{ 'shadow_type[spaceship]': 'drop' }, 'invalid_shadow_type'],
    [{ shadow_type: 'drop; DROP TABLE' }, 'invalid_shadow_type'],
    [{ shadow_method: 'new' }, 'invalid_shadow_method'],
  ];
  for (const [fields, code] of bad) {
    const res = await postImage(url, img, fields);
    t.equal(res.status, 400, code);
    t.equal(firstError(res).code, code);
  }
});
