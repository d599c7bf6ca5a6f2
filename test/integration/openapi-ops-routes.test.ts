// The sandbox and GET /metrics answer as /openapi.json says: a sandbox 200 (X-Credits-Charged 0, the
// client's window in the rate headers) and its 429; /metrics 200 (prom-client's registry), 401 without
// the token, 403 on a non-loopback bind without one. Each response goes through the document check
// (http-client.ts); the routes' own behaviour is tested with their code.

import t, { type Test } from 'tap';
import { loadConfig, type Config } from '../../src/config.js';
import { apiFactory } from '../../src/api/routes.js';
import { createServer } from '../../src/http/server.js';
import { createMetrics } from '../../src/observe/metrics.js';
import { documentedOrigins } from '../helpers/documented-origins.js';
import { FakeLedger } from '../helpers/fake-ledger.js';
import { FakePool } from '../helpers/fake-pool.js';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import * as check from '../helpers/openapi-check.js';
import { quietLogger, startTestServer } from '../helpers/server.js';

t.test('sandbox: a 200 and the 429 past the window match the document', async (t) => {
  const { url } = await startTestServer(t, { config: { sandboxRatePerMinute: 1 } });
  const before = check.checkedResponses;
  const image = await makeImage('png', 64, 48);
  const first = await request(`${url}/sandbox/v1.0/removebg`, sandboxBody(image));
  t.equal(first.status, 200);
  t.equal(first.headers['x-credits-charged'], '0');
  const second = await request(`${url}/sandbox/v1.0/removebg`, sandboxBody(image));
  t.equal(second.status, 429);
  t.equal(check.checkedResponses, before + 2, 'each checked against the document');
});

function sandboxBody(image: Uint8Array) {
  const boundary = 'sandbox-boundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image_file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    Buffer.from(image),
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="size"\r\n\r\nfull\r\n--${boundary}--\r\n`),
  ]);
  return { method: 'POST', headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body };
}

async function metricsServer(t: Test, config: Partial<Config>): Promise<string> {
  const full: Config = Object.freeze({ ...loadConfig([], {}), host: '127.0.0.1', port: 0, demoKey: false, dataDir: t.testdir(), ...config });
  const server = createServer({
    config: full,
    api: apiFactory({ config: full, pool: new FakePool(), ledger: new FakeLedger(), metrics: createMetrics('test') }),
    log: quietLogger,
  });
  await server.listen();
  t.teardown(() => server.close());
  documentedOrigins.add(new URL(server.url).origin);
  return server.url;
}

t.test('/metrics: 200 on loopback, 401 without the token, 403 on another bind', async (t) => {
  const open = await metricsServer(t, {});
  const scrape = await request(`${open}/metrics`);
  t.equal(scrape.status, 200);
  t.match(scrape.headers['content-type'], /^text\/plain/);

  const guarded = await metricsServer(t, { metricsToken: 'secret-token-123' });
  t.equal((await request(`${guarded}/metrics`)).status, 401);
  t.equal((await request(`${guarded}/metrics`, { headers: { Authorization: 'Bearer secret-token-123' } })).status, 200);

  const exposed = await metricsServer(t, { host: '0.0.0.0' });
  t.equal((await request(`${exposed}/metrics`)).status, 403);
});
