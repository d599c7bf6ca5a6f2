// image_url fetching under load: a DNS look-up that never answers is a 400 after its timeout, and downloads
// or look-ups past the per-process caps are 503 service_busy; nothing is charged either way.
import t from 'tap';
import { firstError, postJson } from '../helpers/api.js';
import { startImageHost } from '../helpers/image-host.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';
import { FetchGate } from '../../src/fetch/fetch-gate.js';

type Resolved = Array<{ address: string; family: number }>;

t.test('a DNS look-up that never answers: 400 failed_image_download after the look-up timeout', async (t) => {
  const gate = new FetchGate({ maxFetches: 4, maxLookups: 1 });
  let answer!: (v: Resolved) => void;
  const hung = new Promise<Resolved>((r) => (answer = r));
  // The request deadline is far past the look-up timeout: only the look-up's own timer can answer 400.
  const { url, ledger } = await startTestServer(t, {
    config: { requestTimeoutMs: 20_000 },
    fetchOptions: { connectTimeoutMs: 200, resolve: () => hung, gate },
  });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id);
  const res = await postJson(url, { image_url: 'http://blackholed.example/a.png' });
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'failed_image_download');
  t.equal(
    firstError(res).detail,
    "Failed to download image from given image_url: Could not resolve host 'blackholed.example': the DNS look-up timed out after 200 ms",
  );
  t.equal(gate.inUse.lookups, 1, 'the abandoned look-up still holds its place');

  // With the only look-up place held, the next image_url waits its look-up time and is told to retry.
  const busy = await postJson(url, { image_url: 'http://other.example/a.png' });
  t.equal(busy.status, 503);
  t.equal(firstError(busy).code, 'service_busy');
  t.equal(busy.headers['retry-after'], '1');
  t.same(ledger.balancesNow(acct.id), before, 'nothing charged');
  t.equal(ledger.counts.reserve, 0);
  answer([{ address: '10.0.0.1', family: 4 }]);
  await hung;
  await new Promise<void>((r) => setImmediate(r));
  t.equal(gate.inUse.lookups, 0, 'the place comes back when getaddrinfo returns');
});

t.test('downloads past the per-process cap: 503 service_busy + Retry-After, no charge', async (t) => {
  const gate = new FetchGate({ maxFetches: 1, maxLookups: 1 });
  const { url, ledger } = await startTestServer(t, { fetchOptions: { allowLoopback: true, gate } });
  const host = await startImageHost(t);
  const png = await makeImage('png');
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const stalled = new Promise<void>((r) => (arrived = r));
  host.set('/slow.png', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length });
    res.write(png.subarray(0, 8));
    arrived();
    void released.then(() => res.end(png.subarray(8)));
  });
  host.set('/fast.png', png);
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;

  const first = postJson(url, { image_url: `${host.url}/slow.png` });
  await stalled;
  const second = await postJson(url, { image_url: `${host.url}/fast.png` });
  t.equal(second.status, 503);
  t.equal(firstError(second).code, 'service_busy');
  t.match(firstError(second).detail, /Too many image downloads in progress/);
  t.equal(second.headers['retry-after'], '1');
  t.notOk(host.hits.includes('/fast.png'), 'the refused download never started');
  t.equal(ledger.balancesNow(acct.id).total, before, 'nothing charged for the refusal');
  release();
  t.equal((await first).status, 200);
  t.equal((await postJson(url, { image_url: `${host.url}/fast.png` })).status, 200, 'a place again once the first is done');
  t.equal(ledger.balancesNow(acct.id).total, before - 2);
});
