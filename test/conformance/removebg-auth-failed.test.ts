// Bad key → 403 auth_failed "API Key invalid"; no key → 403 "Missing API Key"; the header name is case-insensitive.
import t from 'tap';
import { firstError } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('auth', async (t) => {
  const { url } = await startTestServer(t);
  const bad = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': 'wrong' } });
  t.equal(bad.status, 403);
  t.same(firstError(bad).code, 'auth_failed');
  t.same(firstError(bad).title, 'API Key invalid');
  t.equal(bad.headers['access-control-allow-origin'], '*');
  const missing = await request(`${url}/v1.0/removebg`, { method: 'POST' });
  t.equal(missing.status, 403);
  t.equal(firstError(missing).title, 'Missing API Key');
  for (const name of ['x-api-key', 'X-API-Key', 'X-API-KEY']) {
    const res = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { [name]: KEY } });
    t.equal(res.status, 400, `${name} authenticates (then: missing_source)`);
  }
});
