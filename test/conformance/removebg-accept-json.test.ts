// Accept: application/json returns {"data":{"result_b64","foreground_*"}} with the X-* headers.
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('JSON result mode', async (t) => {
  const { url } = await startTestServer(t);
  const png = await makeImage('png', 64, 48);
  const res = await postImage(url, png, {}, { Accept: 'application/json' });
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^application\/json/);
  const body = res.json();
  t.same(Object.keys(body), ['data']);
  t.same(Object.keys(body.data).sort(), ['foreground_height', 'foreground_left', 'foreground_top', 'foreground_width', 'result_b64']);
  t.same(Buffer.from(body.data.result_b64, 'base64'), png);
  for (const k of ['foreground_top', 'foreground_left', 'foreground_width', 'foreground_height']) t.type(body.data[k], 'number');
  t.equal(String(body.data.foreground_top), res.headers['x-foreground-top']);
  t.equal(res.headers['x-width'], '64');
  t.ok(res.headers['x-credits-charged']);
});

t.test('without the Accept header the body is raw bytes', async (t) => {
  const { url } = await startTestServer(t);
  const res = await postImage(url, await makeImage('png'), {}, { Accept: 'image/*' });
  t.equal(res.headers['content-type'], 'image/png');
});
