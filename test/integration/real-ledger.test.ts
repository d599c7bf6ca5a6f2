// Against the real LMDB ledger (fake pool): balances move on success, refunds on failure and disconnect, 402, slots, 429.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { multipart, request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { realLedger } from '../helpers/real.js';
import type { LedgerBackend } from '../../src/ledger/ledger.js';
import { startTestServer } from '../helpers/server.js';
import type { FakePool } from '../helpers/fake-pool.js';

async function setup(t: Test, spec: Record<string, number | string>) {
  // Not t.testdir(): its name has a dot-suffix (".test.js-…") that LMDB reads as a file extension.
  const dataDir = mkdtempSync(join(tmpdir(), 'cutout-ledger-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const ledger = realLedger(join(dataDir, 'ledger'));
  t.teardown(() => ledger.close());
  const { account, apiKey } = await ledger.createAccount({ label: 'it', ...spec });
  const srv = await startTestServer<FakePool, LedgerBackend>(t, { ledger, config: { dataDir } });
  const credits = async () => (await request(`${srv.url}/v1.0/account`, { headers: { 'X-Api-Key': apiKey } })).json().data.attributes.credits.total as number;
  return { ...srv, apiKey, accountId: account.id, credits } as const;
}

t.test('charge on success, refund on worker failure', async (t) => {
  const s = await setup(t, { subscription: 3, freeCallsPerMonth: 0 });
  const img = await makeImage('png');
  t.equal(await s.credits(), 3);
  const ok = await postImage(s.url, img, { size: 'full' }, { 'X-Api-Key': s.apiKey });
  t.equal(ok.status, 200);
  t.equal(ok.headers['x-credits-charged'], '1');
  t.equal(await s.credits(), 2);
  s.pool.respond = () => ({ ok: false, code: 'failed_to_read_image', message: 'bad' });
  const bad = await postImage(s.url, img, { size: 'full' }, { 'X-Api-Key': s.apiKey });
  t.equal(bad.status, 400);
  t.equal(await s.credits(), 2, 'refunded');
});

t.test('402 when credits run out; free calls pay for previews', async (t) => {
  const s = await setup(t, { subscription: 0, freeCallsPerMonth: 1 });
  const img = await makeImage('png');
  const full = await postImage(s.url, img, { size: 'full' }, { 'X-Api-Key': s.apiKey });
  t.equal(full.status, 402);
  t.equal(firstError(full).title, 'Insufficient credits');
  const preview = await postImage(s.url, img, { size: 'preview' }, { 'X-Api-Key': s.apiKey });
  t.equal(preview.status, 200);
  t.equal(preview.headers['x-credits-charged'], '0');
  const acct = (await request(`${s.url}/v1.0/account`, { headers: { 'X-Api-Key': s.apiKey } })).json();
  t.equal(acct.data.attributes.api.free_calls, 0);
  const auto = await postImage(s.url, img, { size: 'auto' }, { 'X-Api-Key': s.apiKey });
  t.equal(auto.status, 402, 'auto with nothing left');
});

t.test('disconnect mid-inference refunds and frees the slot (concurrency 1)', async (t) => {
  const s = await setup(t, { subscription: 5, concurrency: 1 });
  const img = await makeImage('png');
  const gate = s.pool.hold();
  const { body, contentType } = multipart([
    { name: 'image_file', value: img, filename: 'image_file' },
    { name: 'size', value: 'full' },
  ]);
  const req = http.request(`${s.url}/v1.0/removebg`, {
    method: 'POST',
    agent: false,
    headers: { 'X-Api-Key': s.apiKey, 'Content-Type': contentType, 'Content-Length': body.length },
  });
  req.on('error', () => {});
  req.end(body);
  await gate.started;
  t.equal(await s.credits(), 4, 'held');
  const second = await postImage(s.url, img, {}, { 'X-Api-Key': s.apiKey });
  t.equal(second.status, 429, 'concurrency 1: second request refused');
  const aborted = s.events.nextAbort('/v1.0/removebg');
  const ended = s.events.nextEnd('/v1.0/removebg');
  req.destroy();
  await aborted;
  gate.release();
  await ended;
  t.equal(await s.credits(), 5, 'refunded');
  const next = await postImage(s.url, img, { size: 'full' }, { 'X-Api-Key': s.apiKey });
  t.equal(next.status, 200, 'slot free again');
  t.equal(await s.credits(), 4);
});

t.test('per-minute rate limit from the ledger', async (t) => {
  const s = await setup(t, { subscription: 10, ratePerMinute: 2 });
  const img = await makeImage('png');
  t.equal((await postImage(s.url, img, {}, { 'X-Api-Key': s.apiKey })).status, 200);
  t.equal((await postImage(s.url, img, {}, { 'X-Api-Key': s.apiKey })).status, 200);
  const third = await postImage(s.url, img, {}, { 'X-Api-Key': s.apiKey });
  t.equal(third.status, 429);
  t.ok(Number(third.headers['retry-after']) >= 1);
  t.equal(third.headers['x-ratelimit-remaining'], '0');
});
