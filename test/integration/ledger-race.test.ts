// Acceptance: an account with k credits and N ≫ k concurrent full-size requests ends with exactly k
// successes (200), N−k 402s and a balance of 0 — in one server process and across `--processes 2`
// (two processes on one port over one data folder).
//
// To make the requests really contend, all N are first held waiting for their image download (each has
// authenticated and taken a concurrency slot; the slots are visible in the ledger), then all are released at once.
import t, { type Test } from 'tap';
import { makeImage } from '../helpers/images.js';
import { errorCode, heldRequest, histogram, makeDataDir, openProbe, overallDeadline, pollUntil, serve, type Outcome } from '../helpers/ledger-procs.js';

const K = 3;
const N = 12;

overallDeadline(t, 540_000);

async function race(t: Test, processes: number): Promise<void> {
  const dataDir = makeDataDir(t);
  const probe = openProbe(t, dataDir);
  const { id, apiKey } = probe.create({ subscription: K, freeCallsPerMonth: 0, concurrency: 100 });
  const srv = await serve(t, { dataDir, processes });
  const image = await makeImage('jpeg', 64, 64);

  const uploads = Array.from({ length: N }, () => heldRequest(srv.base, apiKey, image, { size: 'full' }));
  // Every request authenticated and holds a slot (or something answered early, which is a failure below).
  const held = await pollUntil(() => {
    const s = probe.slots(id);
    return s.count === N || uploads.some((u) => u.done()) ? s : null;
  }, `${N} held slots`);
  t.equal(held.count, N, `all ${N} requests are in the server before any body completes`);
  const pids = new Set(held.pids);
  t.comment(`slots held by server pids ${[...pids].join(', ')}`);
  if (processes > 1) t.equal(pids.size, processes, 'both server processes hold some of the requests');
  t.equal(probe.total(id), K, 'nothing reserved before the bodies complete');

  for (const u of uploads) u.finish();
  const outcomes: Outcome[] = await Promise.all(uploads.map((u) => u.outcome));
  const hist = histogram(outcomes);
  t.comment(`statuses: ${JSON.stringify(hist)}`);
  for (const o of outcomes) if (o.error) t.comment(`connection error: ${o.error.message}`);

  const ok = outcomes.filter((o) => o.res?.status === 200);
  const short = outcomes.filter((o) => o.res?.status === 402);
  t.equal(ok.length, K, `exactly ${K} successes`);
  t.equal(short.length, N - K, `exactly ${N - K} 402s`);
  t.equal(ok.length + short.length, N, 'no other outcome');
  for (const o of ok) {
    t.equal(o.res!.headers['x-credits-charged'], '1', '200 charged 1 credit');
    t.equal(o.res!.headers['x-width'], '64', 'full size: the input width');
  }
  for (const o of short) t.equal(errorCode(o.res), 'insufficient_credits', '402 insufficient_credits');

  t.equal(probe.total(id), 0, 'balance is 0');
  t.equal(probe.ledger.balances(id).freeCalls, 0, 'no free calls used');
  t.equal(probe.usage(id), K, `${K} usage records`);
  t.equal(probe.holds(id), 0, 'no hold left');
  await pollUntil(() => probe.slots(id).count === 0, 'slots released', 10_000);
  t.pass('every slot released');
}

t.test('one process: k credits, N concurrent requests', (t) => race(t, 1));
t.test('two processes on one port and one data folder', (t) => race(t, 2));
