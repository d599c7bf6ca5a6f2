// /v1.0/improve follows the /removebg per-key rules (concurrency slot, per-minute units) and a per-account storage quota (413 storage_quota_exceeded).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { firstError, postJson } from '../helpers/api.js';
import { startImageHost } from '../helpers/image-host.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

const IMPROVE = '/v1.0/improve';

t.test('per-minute units: one per upload, then 429 with Retry-After', async (t) => {
  const { url, ledger } = await startTestServer(t);
  ledger.addAccount('slow', { ratePerMinute: 2 });
  const b64 = (await makeImage('png')).toString('base64');
  for (let i = 0; i < 2; i++) t.equal((await postJson(url, { image_file_b64: b64 }, { 'X-Api-Key': 'slow' }, IMPROVE)).status, 200);
  const res = await postJson(url, { image_file_b64: b64 }, { 'X-Api-Key': 'slow' }, IMPROVE);
  t.equal(res.status, 429);
  t.equal(firstError(res).code, 'rate_limit_exceeded');
  t.equal(res.headers['retry-after'], '42');
  t.equal(res.headers['x-ratelimit-remaining'], '0');
});

t.test('concurrency cap: a request being worked on (its image download included) holds the slot; the next upload gets 429', async (t) => {
  const { url, ledger } = await startTestServer(t, { fetchOptions: { allowLoopback: true } });
  const acct = ledger.addAccount('one-at-a-time', { concurrency: 1 });
  const host = await startImageHost(t);
  const png = await makeImage('png');
  let reached!: () => void;
  const inFlight = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  host.set('/held.png', (_req, res) => {
    reached();
    void released.then(() => res.writeHead(200, { 'Content-Type': 'image/png' }).end(png));
  });
  // The slot is taken once the body is in: a slow upload holds nothing (slow-upload.test.ts),
  // a download the server makes for the request is work on it.
  const first = postJson(url, { image_url: `${host.url}/held.png` }, { 'X-Api-Key': 'one-at-a-time' }, IMPROVE);
  await inFlight;
  t.equal(ledger.slotsInUse(acct.id), 1, 'the download in progress holds the slot');
  const second = await postJson(url, { image_file_b64: png.toString('base64') }, { 'X-Api-Key': 'one-at-a-time' }, IMPROVE);
  t.equal(second.status, 429);
  t.equal(firstError(second).code, 'rate_limit_exceeded');
  t.ok(Number(second.headers['retry-after']) >= 1);
  release();
  t.equal((await first).status, 200);
  t.equal(ledger.slotsInUse(acct.id), 0, 'given back with the answer');
  t.equal(
    (await postJson(url, { image_file_b64: png.toString('base64') }, { 'X-Api-Key': 'one-at-a-time' }, IMPROVE)).status,
    200,
    'the next upload is served',
  );
});

t.test('storage quota: an upload that would pass it is 413 storage_quota_exceeded and nothing is stored', async (t) => {
  const quota = 4000;
  const { url, ledger, config } = await startTestServer(t, { config: { improveQuotaBytes: quota } });
  const acct = ledger.accountOf(KEY)!;
  const b64 = (await makeImage('png')).toString('base64');
  const upload = () => postJson(url, { image_file_b64: b64, tag: 'x' }, {}, IMPROVE);
  t.equal((await upload()).status, 200);
  const each = ledger.storageNow(acct.id).bytes; // image + metadata file; every upload here is the same size
  const fits = Math.min(20, Math.floor(quota / Math.max(1, each))); // bounded even if nothing were counted
  if (!t.ok(fits >= 2 && fits < 20, `${fits} uploads of ${each} bytes fit`)) return;
  for (let i = 1; i < fits; i++) t.equal((await upload()).status, 200);
  t.same(ledger.storageNow(acct.id), { bytes: fits * each, files: fits });

  const res = await upload();
  t.equal(res.status, 413);
  t.same(res.json(), {
    errors: [
      {
        title: 'Storage quota exceeded',
        code: 'storage_quota_exceeded',
        detail: `Improve uploads of this account use ${Number(((fits * each) / 1024).toFixed(1))}KB of its ${Number((quota / 1024).toFixed(1))}KB quota; this one needs ${each} bytes.`,
      },
    ],
  });
  t.same(ledger.storageNow(acct.id), { bytes: fits * each, files: fits }, 'nothing counted');
  t.equal(readdirSync(join(config.dataDir, 'improve')).length, 2 * fits, 'the stored images and their metadata, nothing more');
  // The quota is per account: another key still has room.
  ledger.addAccount('other');
  t.equal((await postJson(url, { image_file_b64: b64 }, { 'X-Api-Key': 'other' }, IMPROVE)).status, 200);
});
