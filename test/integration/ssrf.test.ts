// image_url may not reach loopback, private, link-local or metadata addresses, directly or by redirect.
import t from 'tap';
import { firstError, postJson } from '../helpers/api.js';
import { startImageHost } from '../helpers/image-host.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('direct private targets (production settings)', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const host = await startImageHost(t);
  host.set('/a.png', await makeImage('png'));
  const targets = [
    `${host.url}/a.png`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]:1/a.png',
    'http://[::ffff:127.0.0.1]:1/a.png',
    'http://10.0.0.1/a.png',
    'http://localhost:1/a.png',
    'http://0.0.0.0:1/',
    'http://2130706433/',
  ];
  for (const target of targets) {
    const res = await postJson(url, { image_url: target });
    t.equal(res.status, 400, target);
    const e = firstError(res);
    t.equal(e.code, 'failed_image_download', target);
    t.match(e.title, /^Failed to download image from given image_url: /);
  }
  t.same(host.hits, [], 'the loopback host was never contacted');
  t.match(firstError(await postJson(url, { image_url: 'http://169.254.169.254/' })).detail, /link-local/);
  const bg = await postJson(url, { image_file_b64: (await makeImage('png')).toString('base64'), bg_image_url: 'http://127.0.0.1:1/bg.png' });
  t.equal(firstError(bg).code, 'failed_bg_download');
  t.equal(ledger.counts.reserve, 0);
});

t.test('a redirect to a private address is refused (loopback allowed for the test host only)', async (t) => {
  const { url } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const host = await startImageHost(t);
  host.set('/to-metadata', (_req, res) => void res.writeHead(302, { Location: 'http://169.254.169.254/latest/meta-data/' }).end());
  host.set('/to-private', (_req, res) => void res.writeHead(301, { Location: 'http://192.168.0.1/x.png' }).end());
  host.set('/to-v6', (_req, res) => void res.writeHead(307, { Location: 'http://[fd00::1]/x.png' }).end());
  for (const path of ['/to-metadata', '/to-private', '/to-v6']) {
    const res = await postJson(url, { image_url: `${host.url}${path}` });
    t.equal(res.status, 400, path);
    t.equal(firstError(res).code, 'failed_image_download');
    t.match(firstError(res).detail, /Refusing to connect/);
  }
});

t.test('redirects: followed up to 3, then refused', async (t) => {
  const { url } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const host = await startImageHost(t);
  host.set('/img.png', await makeImage('png'));
  for (let i = 1; i <= 4; i++) host.set(`/r${i}`, (_req, res) => void res.writeHead(302, { Location: i === 1 ? '/img.png' : `/r${i - 1}` }).end());
  t.equal((await postJson(url, { image_url: `${host.url}/r3` })).status, 200, '3 redirects ok');
  const tooMany = await postJson(url, { image_url: `${host.url}/r4` });
  t.equal(tooMany.status, 400);
  t.match(firstError(tooMany).detail, /Too many redirects/);
});

t.test('download size cap and timeout', async (t) => {
  const { url } = await startTestServer(t, { config: { maxImageBytes: 100 * 1024, fetchTimeoutMs: 300 }, fetchOptions: { allowLoopback: true } });
  const host = await startImageHost(t);
  host.set('/huge-declared', (_req, res) => void res.writeHead(200, { 'Content-Length': String(10 * 1024 * 1024) }).end());
  host.set('/huge-streamed', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'image/png' });
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < 50 && res.write(chunk)) sent++;
      if (sent < 50) res.once('drain', pump);
      else res.end();
    };
    res.on('error', () => {});
    pump();
  });
  host.set('/stall', (_req, res) => void res.writeHead(200, { 'Content-Type': 'image/png' }).write('\x89PNG'));
  const declared = await postJson(url, { image_url: `${host.url}/huge-declared` });
  t.match(firstError(declared).detail, /exceeds limit/);
  const streamed = await postJson(url, { image_url: `${host.url}/huge-streamed` });
  t.equal(firstError(streamed).code, 'failed_image_download');
  t.match(firstError(streamed).detail, /exceeds limit/);
  const stall = await postJson(url, { image_url: `${host.url}/stall` });
  t.equal(firstError(stall).code, 'failed_image_download');
  t.match(firstError(stall).detail, /Timed out/);
});

t.test('the fetcher pins the checked address: a name resolving to a private address is refused', async (t) => {
  const { fetchImage } = await import('../../src/fetch/image-url.js');
  await t.rejects(
    fetchImage(new URL('http://rebind.example/x.png'), {
      resolve: async () => [
        { address: '8.8.8.8', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
    }),
    { name: 'ImageFetchError', message: /10\.0\.0\.5/ },
  );
  // Public-looking resolution but the connection must go to the pinned address, not a fresh lookup.
  const host = await startImageHost(t);
  host.set('/p.png', await makeImage('png'));
  const port = new URL(host.url).port;
  const got = await fetchImage(new URL(`http://images.example:${port}/p.png`), {
    allowLoopback: true,
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  t.equal(got.data.subarray(1, 4).toString(), 'PNG');
  t.same(host.hits, ['/p.png']);
});
