// Near its memory limit, the server takes no new body: 503 service_busy + Retry-After on every endpoint
// that reads one, nothing reserved or charged, no slot held; served again once the memory is back.
import t from 'tap';
import { firstError, postJson } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';
import { MemoryPressure } from '../../src/process/memory-pressure.js';

const MB = 1024 * 1024;

t.test('503 while the RSS is above 95% of the limit, 200 once it is below', async (t) => {
  let rss = 590 * MB;
  let now = 0;
  const memoryPressure = new MemoryPressure(
    600 * MB,
    () => rss,
    () => (now += 1000),
  );
  const { url, ledger } = await startTestServer(t, { memoryPressure });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const b64 = (await makeImage('png')).toString('base64');

  for (const path of ['/v1.0/removebg', '/v1.0/improve']) {
    const res = await request(`${url}${path}`, {
      method: 'POST',
      headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ image_file_b64: b64 }),
    });
    t.equal(res.status, 503, path);
    t.equal(firstError(res).code, 'service_busy', path);
    t.match(firstError(res).detail, /near its memory limit \(590MB of 600MB in use\)/, path);
    t.equal(res.headers['retry-after'], '2', path);
  }
  t.equal(ledger.counts.reserve, 0, 'nothing reserved');
  t.equal(ledger.balancesNow(acct.id).total, before, 'nothing charged');
  t.equal((await request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY } })).status, 200, 'reads without a body still answered');

  rss = 400 * MB;
  const ok = await postJson(url, { image_file_b64: b64 });
  t.equal(ok.status, 200, 'served once the memory is back');
  t.equal(ledger.balancesNow(acct.id).total, before - 1, 'charged once');
});
