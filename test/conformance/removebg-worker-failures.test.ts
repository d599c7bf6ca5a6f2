// Worker failures failed_to_read_image/invalid_file_type/resolution_too_high → 400 with that code; credits refunded.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { KEY, quietLogger, startTestServer } from '../helpers/server.js';
import type { RemoveErrorCode } from '../../src/pool/protocol.js';

t.test('typed failures', async (t) => {
  const { url, pool, ledger } = await startTestServer(t);
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  for (const code of ['failed_to_read_image', 'invalid_file_type', 'resolution_too_high', 'roi_exceeds_bounds'] as RemoveErrorCode[]) {
    pool.respond = () => ({ ok: false, code, message: `worker says ${code}` });
    const res = await postImage(url, await makeImage('png'));
    t.equal(res.status, 400, code);
    t.equal(firstError(res).code, code);
    t.equal(firstError(res).detail, `worker says ${code}`);
  }
  t.equal(ledger.balancesNow(acct.id).total, before, 'every failure refunded');
});

t.test('an internal failure is a 500 without internals', async (t) => {
  const { url, pool, ledger } = await startTestServer(t);
  pool.respond = () => {
    throw new Error('secret internal path /opt/x.js');
  };
  const res = await postImage(url, await makeImage('png'));
  t.equal(res.status, 500);
  t.equal(firstError(res).code, 'internal_error');
  t.notMatch(res.text(), /secret|\/opt\/|at /);
  t.equal(ledger.counts.refund, 1);
  t.ok(quietLogger.errors.length > 0, 'logged server-side');
});
