// A full work queue → 503 with Retry-After and the error envelope; credits are refunded.
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { firstError } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('queue_full', async (t) => {
  const { url, pool, ledger } = await startTestServer(t);
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  pool.rejectNextWith = 'queue_full';
  const res = await postImage(url, await makeImage('png'));
  t.equal(res.status, 503);
  t.ok(Number(res.headers['retry-after']) >= 1);
  t.equal(firstError(res).code, 'service_busy');
  t.equal(ledger.balancesNow(acct.id).total, before, 'refunded');
  t.equal(ledger.counts.refund, 1);
});
