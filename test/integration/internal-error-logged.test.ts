// A request that ends in internal_error because of a worker failure logs the worker's message; the client sees none of it.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';
import type { Logger } from '../../src/http/server.js';

t.test('a worker result with code internal_error is logged with its message', async (t) => {
  const lines: string[] = [];
  const log: Logger = { info() {}, error: (msg, err) => void lines.push(`${msg} ${err instanceof Error ? err.message : (err ?? '')}`) };
  const { url, pool, ledger } = await startTestServer(t, { log });
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id).total;
  const secret = 'ERR_CUTOUT_ARG: Expected an integer between 1 and 65536 for width but received 70000';
  pool.respond = () => ({ ok: false, code: 'internal_error', message: secret });
  const res = await postImage(url, await makeImage('png'));
  t.equal(res.status, 500);
  t.equal(firstError(res).code, 'internal_error');
  t.notMatch(res.text(), /ERR_CUTOUT|70000/, 'nothing internal reaches the client');
  t.equal(lines.length, 1, 'one log line');
  t.match(lines[0], /internal_error on request #\d+ POST \/v1\.0\/removebg/);
  t.match(lines[0], secret);
  t.equal(ledger.balancesNow(acct.id).total, before, 'refunded');
});
