// Unknown routes → 404, wrong methods → 405 with Allow; both in the {"errors":[…]} JSON envelope with CORS.
import t from 'tap';
import { firstError, request } from '../helpers/http-client.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('404 and 405', async (t) => {
  const { url } = await startTestServer(t);
  const nf = await request(`${url}/v2/removebg`);
  t.equal(nf.status, 404);
  t.equal(nf.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(firstError(nf).code, 'not_found');
  t.equal(nf.headers['access-control-allow-origin'], '*');
  const wrong = await request(`${url}/v1.0/removebg`, { headers: { 'X-Api-Key': KEY } });
  t.equal(wrong.status, 405);
  t.equal(firstError(wrong).code, 'method_not_allowed');
  t.match(wrong.headers.allow, /POST/);
  const put = await request(`${url}/v1.0/account`, { method: 'PUT', headers: { 'X-Api-Key': KEY } });
  t.equal(put.status, 405);
  t.match(put.headers.allow, /GET/);
});
