// POST /sandbox/v1.0/removebg: the remove.bg wire without a key, at preview size, charged nothing.
import t from 'tap';
import { KEY } from '../helpers/api.js';
import { firstError } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { sandboxImage, sandboxJson, sandboxUrlencoded } from '../helpers/sandbox.js';
import { startTestServer } from '../helpers/server.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

t.test('no key: multipart, JSON and urlencoded bodies each get the PNG and its headers; nothing is charged', async (t) => {
  const { url, ledger, pool } = await startTestServer(t);
  const before = ledger.balancesNow(ledger.accountOf(KEY)!.id);
  const img = await makeImage('png', 64, 48);
  const b64 = img.toString('base64');

  const answers = [
    await sandboxImage(url, img, { size: 'full' }),
    await sandboxJson(url, { image_file_b64: b64, size: 'auto' }),
    await sandboxUrlencoded(url, { image_file_b64: b64, size: 'preview' }),
  ];
  for (const res of answers) {
    t.equal(res.status, 200);
    t.equal(res.headers['content-type'], 'image/png');
    t.same(res.body.subarray(0, 8), PNG_SIGNATURE, 'the image bytes');
    t.same(res.body, img, 'the fake pool echoes the input');
    t.equal(res.headers['x-width'], '64');
    t.equal(res.headers['x-height'], '48');
    t.equal(res.headers['x-credits-charged'], '0');
    t.equal(res.headers['x-dropin-provider'], 'cutout');
    t.equal(res.headers['x-ratelimit-limit'], '10', 'the per-client window');
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  }
  t.same(
    answers.map((r) => r.headers['x-ratelimit-remaining']),
    ['9', '8', '7'],
  );
  t.same(
    pool.tasks.map((task) => task.options.size),
    ['preview', 'preview', 'preview'],
    'full and auto are capped at preview',
  );
  t.same(pool.priorities, ['low', 'low', 'low'], 'sandbox work queues behind keyed work');
  t.same(ledger.counts, { reserve: 0, settle: 0, refund: 0 }, 'the ledger was never asked');
  t.same(ledger.balancesNow(ledger.accountOf(KEY)!.id), before, 'balances unchanged');
});

t.test('a key sent to the sandbox is ignored: still free, the account untouched', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const res = await sandboxImage(url, await makeImage('png'), {}, { 'X-Api-Key': KEY });
  t.equal(res.status, 200);
  t.equal(res.headers['x-credits-charged'], '0');
  t.equal(ledger.counts.reserve, 0);
  t.equal(ledger.balancesNow(ledger.accountOf(KEY)!.id).total, 100);
});

t.test('errors are remove.bg envelopes; a bad request costs nothing but counts against the window', async (t) => {
  const { url, ledger } = await startTestServer(t, { config: { sandboxRatePerMinute: 2 } });
  const missing = await sandboxJson(url, {});
  t.equal(missing.status, 400);
  t.equal(missing.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(firstError(missing).code, 'missing_source');
  t.ok(missing.headers['x-request-id'], 'errors carry X-Request-Id too');
  const badSize = await sandboxImage(url, await makeImage('png'), { size: 'huge' });
  t.equal(badSize.status, 400);
  t.equal(firstError(badSize).code, 'invalid_size', 'size is validated before it is capped');
  const over = await sandboxImage(url, await makeImage('png'));
  t.equal(over.status, 429);
  t.equal(firstError(over).code, 'rate_limit_exceeded');
  t.equal(firstError(over).title, 'Rate limit exceeded');
  t.ok(Number(over.headers['retry-after']) >= 1 && Number(over.headers['retry-after']) <= 60, 'Retry-After: seconds to the next minute');
  t.equal(over.headers['x-ratelimit-remaining'], '0');
  t.equal(ledger.counts.reserve, 0);
});

t.test('a declared body over the limit is 413 before the window is counted', async (t) => {
  const { url } = await startTestServer(t, { config: { sandboxRatePerMinute: 1, maxBodyBytes: 2048 } });
  const big = await sandboxImage(url, Buffer.alloc(4096, 1));
  t.equal(big.status, 413);
  const ok = await sandboxImage(url, await makeImage('png', 8, 8));
  t.equal(ok.status, 200, 'the 413 used none of the minute');
});
