// An account without credits gets 402 insufficient_credits "Insufficient credits" and nothing runs.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('402', async (t) => {
  const { url, ledger, pool } = await startTestServer(t);
  const broke = ledger.addAccount('broke', { credits: 0, freeCalls: 0 });
  const res = await postImage(url, await makeImage('png'), { size: 'full' }, { 'X-Api-Key': 'broke' });
  t.equal(res.status, 402);
  t.equal(firstError(res).title, 'Insufficient credits');
  t.equal(firstError(res).code, 'insufficient_credits');
  t.equal(pool.tasks.length, 0);
  t.equal(ledger.slotsInUse(broke.id), 0, 'slot released');
});
