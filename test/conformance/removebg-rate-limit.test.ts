// Over the per-minute limit or the concurrency cap → 429 rate_limit_exceeded with Retry-After.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('per-minute limit', async (t) => {
  const { url, ledger } = await startTestServer(t);
  ledger.addAccount('slow', { ratePerMinute: 1 });
  const img = await makeImage('png');
  t.equal((await postImage(url, img, {}, { 'X-Api-Key': 'slow' })).status, 200);
  const res = await postImage(url, img, {}, { 'X-Api-Key': 'slow' });
  t.equal(res.status, 429);
  t.equal(firstError(res).title, 'Rate limit exceeded');
  t.equal(firstError(res).code, 'rate_limit_exceeded');
  t.equal(res.headers['retry-after'], '42');
  t.equal(res.headers['x-ratelimit-limit'], '1');
  t.equal(res.headers['x-ratelimit-remaining'], '0');
});

t.test('concurrency cap', async (t) => {
  const { url, ledger, pool } = await startTestServer(t);
  const acct = ledger.addAccount('one-at-a-time', { concurrency: 1 });
  const img = await makeImage('png');
  const gate = pool.hold();
  const first = postImage(url, img, {}, { 'X-Api-Key': 'one-at-a-time' });
  await gate.started;
  const second = await postImage(url, img, {}, { 'X-Api-Key': 'one-at-a-time' });
  t.equal(second.status, 429);
  t.ok(Number(second.headers['retry-after']) >= 1);
  gate.release();
  t.equal((await first).status, 200);
  t.equal(ledger.slotsInUse(acct.id), 0);
});
