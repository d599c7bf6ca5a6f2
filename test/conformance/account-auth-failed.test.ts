// GET /v1.0/account with a bad key → 403 {"errors":[{"title":"API Key invalid","code":"auth_failed"}]}.
import t from 'tap';
import { firstError, request } from '../helpers/http-client.js';
import { startTestServer } from '../helpers/server.js';

t.test('403', async (t) => {
  const { url } = await startTestServer(t);
  const res = await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': 'nope' } });
  t.equal(res.status, 403);
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(firstError(res).title, 'API Key invalid');
  t.equal(firstError(res).code, 'auth_failed');
});
