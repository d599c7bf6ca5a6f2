// GET /v1.0/account with Content-Type: application/json and an empty body (removd) is fine.
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('tolerates a JSON content type with no body', async (t) => {
  const { url } = await startTestServer(t);
  const res = await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' } });
  t.equal(res.status, 200);
  t.type(res.json().data.attributes.credits.total, 'number');
  const withLen = await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json', 'Content-Length': '0' } });
  t.equal(withLen.status, 200);
});
