// No image_file/image_file_b64/image_url → 400 missing_source "No image given", no credits moved.
import t from 'tap';
import { firstError, postJson, postMultipart } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('missing source in every body type', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const responses = [
    await postMultipart(url, [{ name: 'size', value: 'auto' }]),
    await postJson(url, { size: 'auto' }),
    await postJson(url, { image_file_b64: '', image_url: '' }),
    await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY } }),
  ];
  for (const res of responses) {
    t.equal(res.status, 400);
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    const e = firstError(res);
    t.equal(e.code, 'missing_source');
    t.equal(e.title, 'No image given');
    t.equal(e.detail, 'Please provide the source image in the image_url, image_file or image_file_b64 parameter.');
  }
  t.equal(ledger.counts.reserve, 0);
});
