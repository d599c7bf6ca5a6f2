// OPTIONS preflight on API routes → 204 with Access-Control-Allow-Origin/Methods/Headers (X-Api-Key allowed).
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { startTestServer } from '../helpers/server.js';

t.test('preflight', async (t) => {
  const { url } = await startTestServer(t);
  const res = await request(`${url}/v1.0/removebg`, {
    method: 'OPTIONS',
    headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key, content-type' },
  });
  t.equal(res.status, 204);
  t.equal(res.headers['access-control-allow-origin'], '*');
  t.match(res.headers['access-control-allow-methods'], /POST/);
  t.match(res.headers['access-control-allow-headers'], /X-Api-Key/i);
  t.match(res.headers['access-control-expose-headers'], /X-Credits-Charged/);
  t.equal(res.body.length, 0);
});
