// GET /healthz is 200 while alive; GET /readyz is 200 only when the pool is ready and the ledger open, else 503.
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { startTestServer } from '../helpers/server.js';

t.test('health and readiness', async (t) => {
  const { url, pool, ledger } = await startTestServer(t);
  t.equal((await request(`${url}/healthz`)).status, 200);
  t.equal((await request(`${url}/readyz`)).status, 200);
  pool.ready = false;
  const notReady = await request(`${url}/readyz`);
  t.equal(notReady.status, 503);
  t.equal(notReady.json().checks.pool, false);
  pool.ready = true;
  ledger.opened = false;
  t.equal((await request(`${url}/readyz`)).status, 503);
  t.equal((await request(`${url}/healthz`)).status, 200, 'still alive');
});
