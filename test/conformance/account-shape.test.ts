// GET /v1.0/account returns exactly {"data":{"attributes":{"credits":{total,subscription,payg,enterprise},"api":{free_calls,sizes:"all"}}}}.
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('account', async (t) => {
  const { url, ledger } = await startTestServer(t);
  ledger.addAccount('acct-key', { credits: 7, freeCalls: 3 });
  const res = await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': 'acct-key' } });
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(res.headers['access-control-allow-origin'], '*');
  t.same(res.json(), { data: { attributes: { credits: { total: 7, subscription: 7, payg: 0, enterprise: 0 }, api: { free_calls: 3, sizes: 'all' } } } });
  t.ok(res.headers['x-ratelimit-limit']);
});

t.test('balance moves after a removal', async (t) => {
  const { url } = await startTestServer(t);
  const before = (await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY } })).json().data.attributes.credits.total;
  t.equal((await postImage(url, await makeImage('png'), { size: 'full' })).status, 200);
  const after = (await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY } })).json().data.attributes.credits.total;
  t.equal(after, before - 1);
});
