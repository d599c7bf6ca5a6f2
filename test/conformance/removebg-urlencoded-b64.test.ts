// application/x-www-form-urlencoded bodies with image_file_b64 are accepted, '+' intact or space-mangled.
import t from 'tap';
import { postUrlencoded } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('properly encoded base64', async (t) => {
  const { url } = await startTestServer(t);
  const png = await makeImage('png', 80, 60);
  const res = await postUrlencoded(url, { image_file_b64: png.toString('base64'), size: 'auto', crop: 'false' });
  t.equal(res.status, 200);
  t.same(res.body, png);
});

t.test("a client that forgot to escape '+' still works", async (t) => {
  const { url } = await startTestServer(t);
  const png = await makeImage('png', 80, 60);
  const b64 = png.toString('base64');
  t.ok(b64.includes('+') || b64.includes('/'), 'fixture has base64 punctuation');
  const raw = `image_file_b64=${b64.replace(/\//g, '%2F').replace(/=/g, '%3D')}`; // '+' left raw → decoded as space
  const res = await request(`${url}/v1.0/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: raw,
  });
  t.equal(res.status, 200);
  t.same(res.body, png);
});
