// A 30-request sandbox burst from three clients against one worker: the per-client window and the
// global share hold exactly, and keyed requests sent during the burst keep their place: each one
// waits only for the sandbox photo already running, never for a waiting one. Order is read from the
// pool's execution log; the test waits on events (the gate, the pool's run() calls), never a clock.
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { firstError, type TestResponse } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { FakePool, pngSize } from '../helpers/fake-pool.js';
import { sandboxImage } from '../helpers/sandbox.js';
import { startTestServer } from '../helpers/server.js';

const CLIENTS = ['203.0.113.1', '203.0.113.2', '2001:db8:1:2::7'];
const PER_CLIENT = 10;
const RATE = 5;
const SHARE = 2;

t.test('per-client window and share under a burst; keyed requests go ahead of waiting sandbox work', async (t) => {
  const pool = new FakePool({ workers: 1, lowPriorityPlaces: SHARE });
  const fixedMinute = Date.UTC(2026, 0, 1, 12, 0, 30); // the burst cannot straddle a minute
  const { url, ledger } = await startTestServer(t, { pool, config: { sandboxRatePerMinute: RATE, trustProxy: true }, clock: () => fixedMinute });
  ledger.addAccount('keyed', { credits: 10, concurrency: 10 });
  const gate = pool.hold(); // the first task to start stays running until released

  // Sandbox photos are 100+i px wide, keyed ones 200+k: the pool's log says who ran when.
  const burst: Array<Promise<{ client: string; res: TestResponse }>> = [];
  let answered = 0;
  let allRefused!: () => void;
  const refusalsIn = new Promise<void>((r) => (allRefused = r));
  for (let i = 0; i < CLIENTS.length * PER_CLIENT; i++) {
    const client = CLIENTS[i % CLIENTS.length]!;
    // A forged entry on the left is the client's own claim: only the proxy's last entry counts.
    const headers = { 'X-Forwarded-For': `198.51.100.${i}, ${client}` };
    const img = await makeImage('png', 100 + i, 10);
    burst.push(
      sandboxImage(url, img, { size: 'full' }, headers).then((res) => {
        if (++answered === CLIENTS.length * PER_CLIENT - SHARE) allRefused();
        return { client, res };
      }),
    );
  }
  await gate.started;
  await refusalsIn; // everything but the share's two places has been answered
  t.same(pool.stats(), { ...pool.stats(), running: 1, queued: 1 }, 'one sandbox photo running, one waiting');
  t.equal(pool.priorities.length, CLIENTS.length * RATE, 'only requests inside their window reached the pool');

  const keyed: Array<Promise<TestResponse>> = [];
  for (let k = 0; k < 3; k++) {
    keyed.push(postImage(url, await makeImage('png', 200 + k, 10), {}, { 'X-Api-Key': 'keyed' }));
    await pool.whenRuns(CLIENTS.length * RATE + k + 1); // queued in this order
  }
  t.same(pool.stats(), { ...pool.stats(), running: 1, queued: 4 });
  gate.release();

  const keyedAnswers = await Promise.all(keyed);
  const results = await Promise.all(burst);
  t.same(
    keyedAnswers.map((r) => r.status),
    [200, 200, 200],
  );
  t.same(
    keyedAnswers.map((r) => r.headers['x-credits-charged']),
    ['1', '1', '1'],
  );

  const widths = pool.tasks.map((task) => pngSize(task.input)!.width);
  t.equal(widths.length, 5);
  t.ok(widths[0]! < 200 && widths[4]! < 200, 'sandbox photos first (it was running) and last (it was waiting)');
  t.same(widths.slice(1, 4), [200, 201, 202], 'keyed requests ran in arrival order, ahead of the waiting sandbox photo');

  const ok = results.filter((r) => r.res.status === 200);
  const refused = results.filter((r) => r.res.status === 429);
  t.equal(ok.length, SHARE);
  t.equal(refused.length, CLIENTS.length * PER_CLIENT - SHARE);
  for (const { res } of [...ok]) t.equal(res.headers['x-credits-charged'], '0');
  for (const { res } of refused) {
    t.equal(firstError(res).code, 'rate_limit_exceeded');
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
  }
  for (const client of CLIENTS) {
    const windowRefusals = refused.filter((r) => r.client === client && /requests a minute/.test(firstError(r.res).detail ?? ''));
    t.equal(windowRefusals.length, PER_CLIENT - RATE, `${client}: exactly ${PER_CLIENT - RATE} refused by its window`);
    for (const r of windowRefusals) {
      t.equal(r.res.headers['x-ratelimit-remaining'], '0');
      t.equal(r.res.headers['retry-after'], '30', 'to the end of the fixed minute');
    }
  }
  const shareRefusals = refused.filter((r) => /share/.test(firstError(r.res).detail ?? ''));
  t.equal(shareRefusals.length, CLIENTS.length * RATE - SHARE, 'the rest of the windows refused by the share');
  t.equal(ledger.counts.reserve, 3, 'only the keyed requests touched the ledger');
});
