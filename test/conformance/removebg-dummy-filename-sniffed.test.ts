// image_file parts with a dummy filename and no Content-Type (python requests) are sniffed by their bytes.
import t from 'tap';
import { postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('jpeg, png and webp under filename="image_file" with no part type', async (t) => {
  const { url } = await startTestServer(t);
  for (const format of ['jpeg', 'png', 'webp'] as const) {
    const img = await makeImage(format);
    const res = await postMultipart(url, [{ name: 'image_file', value: img, filename: 'image_file' }]);
    t.equal(res.status, 200, format);
  }
});

t.test('a lying part type does not matter: bytes decide', async (t) => {
  const { url } = await startTestServer(t);
  const img = await makeImage('jpeg');
  const res = await postMultipart(url, [{ name: 'image_file', value: img, filename: 'x.gif', type: 'application/octet-stream' }]);
  t.equal(res.status, 200);
});

t.test('image_file part without any filename', async (t) => {
  const { url } = await startTestServer(t);
  const res = await postMultipart(url, [{ name: 'image_file', value: await makeImage('png') }]);
  t.equal(res.status, 200);
});
