// No response says which server library answers it: uWS's `uWebSockets: 20` header is switched off
// (uWS._cfg('silent') in createServer) for every kind of answer the service gives.
import t from 'tap';
import { postImage, postJson } from '../helpers/api.js';
import { request, type TestResponse } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';
import { FakeLedger } from '../helpers/fake-ledger.js';

t.test('no uWebSockets header on any response', async (t) => {
  const ledger = new FakeLedger();
  ledger.addAccount(KEY, { credits: 1 });
  const { url, pool, server } = await startTestServer(t, { ledger, config: { maxBodyBytes: 4096 } });
  const png = await makeImage('png');
  const seen: Array<[string, TestResponse]> = [];
  const check = async (what: string, status: number, res: Promise<TestResponse>) => {
    const r = await res;
    t.equal(r.status, status, `${what}: ${status}`);
    seen.push([what, r]);
  };
  await check('health', 200, request(`${url}/healthz`));
  await check('readiness', 200, request(`${url}/readyz`));
  await check('account', 200, request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY } }));
  await check('preflight', 204, request(`${url}/v1.0/removebg`, { method: 'OPTIONS' }));
  await check('removal (image bytes)', 200, postImage(url, png));
  await check('removal (JSON)', 402, postImage(url, png, {}, { Accept: 'application/json' }));
  await check('bad parameter', 400, postJson(url, { image_file_b64: png.toString('base64'), size: 'huge' }));
  await check('missing key', 403, request(`${url}/v1.0/account`));
  await check('not found', 404, request(`${url}/nope`));
  await check('wrong method', 405, request(`${url}/v1.0/removebg`));
  await check('body too large', 413, postImage(url, Buffer.alloc(8192)));
  ledger.addAccount('second-key', { credits: 5 });
  pool.rejectNextWith = 'queue_full';
  await check('queue full', 503, postImage(url, png, {}, { 'X-Api-Key': 'second-key' }));
  const closing = server.close();
  await closing;
  for (const [what, res] of seen) {
    t.same(
      Object.keys(res.headers).filter((h) => /uwebsockets|^server$|x-powered-by/i.test(h)),
      [],
      `${what}: no server-identifying header`,
    );
  }
});
