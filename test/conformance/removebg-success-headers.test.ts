// A 200 carries X-Width/Height, integer X-Credits-Charged, X-Foreground-*, X-RateLimit-*, X-Max-*, CORS; never X-Type.
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('success headers', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const res = await postImage(url, await makeImage('png', 64, 48));
  t.equal(res.status, 200);
  const h = res.headers;
  t.equal(h['x-width'], '64');
  t.equal(h['x-height'], '48');
  t.equal(h['x-max-width'], '64');
  t.equal(h['x-max-height'], '48');
  t.match(h['x-credits-charged'], /^\d+$/, 'integer credits');
  t.equal(h['x-credits-charged'], '1');
  t.match(h['x-processing-time-ms'], /^\d+$/);
  t.equal(h['x-dropin-provider'], 'cutout');
  for (const k of ['x-foreground-top', 'x-foreground-left', 'x-foreground-width', 'x-foreground-height']) t.match(h[k], /^\d+$/, k);
  t.equal(h['x-ratelimit-limit'], '500');
  t.equal(h['x-ratelimit-remaining'], '499');
  t.equal(h['x-ratelimit-reset'], String(ledger.windowReset));
  t.equal(h['access-control-allow-origin'], '*');
  t.equal(h['x-type'], undefined, 'no class is known, so no X-Type');
  t.equal(h['retry-after'], undefined, 'Retry-After only on 429');
});

t.test('free call: X-Credits-Charged is 0', async (t) => {
  const { url, ledger } = await startTestServer(t);
  ledger.addAccount('free-key', { credits: 0, freeCalls: 1 });
  const res = await postImage(url, await makeImage('png'), { size: 'preview' }, { 'X-Api-Key': 'free-key' });
  t.equal(res.status, 200);
  t.equal(res.headers['x-credits-charged'], '0');
});
