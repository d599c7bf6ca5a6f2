// Acceptance: `kill -9` the server while requests hold reservations (and slots); after a restart on the same
// data folder the balances equal the starting balance minus exactly the requests that returned 200 to the
// client. Startup reconciles the dead process's holds and slots.
import t from 'tap';
import { makeImage } from '../helpers/images.js';
import { get, heldRequest, histogram, makeDataDir, openProbe, overallDeadline, pollUntil, removeBg, serve, type Outcome } from '../helpers/ledger-procs.js';

overallDeadline(t, 540_000);

t.test('kill -9 with reservations in flight, then restart', async (t) => {
  const dataDir = makeDataDir(t);
  const probe = openProbe(t, dataDir);
  // A pays credits for full-size results; B pays previews with free calls only.
  const A_START = 10;
  const B_FREE = 5;
  const a = probe.create({ label: 'credits', subscription: A_START, freeCallsPerMonth: 0, concurrency: 6 });
  const b = probe.create({ label: 'free', subscription: 0, freeCallsPerMonth: B_FREE, concurrency: 6 });
  const image = await makeImage('jpeg', 64, 64);

  const first = await serve(t, { dataDir });
  const freeCalls = () => probe.ledger.balances(b.id).freeCalls;

  // Before the crash: one completed request per account.
  const okA = await removeBg(first.base, a.apiKey, image, { size: 'full' });
  const okB = await removeBg(first.base, b.apiKey, image, { size: 'preview' });
  t.equal(okA.res?.status, 200, 'A: a full-size request before the crash');
  t.equal(okB.res?.status, 200, 'B: a preview on a free call before the crash');
  t.equal(okB.res?.headers['x-credits-charged'], '0', 'B: no credit charged');
  t.equal(probe.total(a.id), A_START - 1, 'A: charged 1 credit');
  t.equal(freeCalls(), B_FREE - 1, 'B: used 1 free call');

  // In flight at the crash: 3 reserved removals for A, 2 for B (one worker: one runs, the rest wait in the
  // pool holding their reservations), plus 2 requests for A that hold only a slot (their image download held).
  const inflightA = Array.from({ length: 3 }, () => heldRequest(first.base, a.apiKey, image, { size: 'full' }));
  const inflightB = Array.from({ length: 2 }, () => heldRequest(first.base, b.apiKey, image, { size: 'preview' }));
  const slotOnly = Array.from({ length: 2 }, () => heldRequest(first.base, a.apiKey, image, { size: 'full' }));
  const all = [...inflightA, ...inflightB, ...slotOnly];
  for (const u of [...inflightA, ...inflightB]) u.finish();
  const seen = await pollUntil(() => {
    const s = { holdsA: probe.holds(a.id), holdsB: probe.holds(b.id), slotsA: probe.slots(a.id).count, slotsB: probe.slots(b.id).count };
    return (s.holdsA === 3 && s.holdsB === 2 && s.slotsA === 5 && s.slotsB === 2) || all.some((u) => u.done()) ? s : null;
  }, 'reservations held by the server');
  t.same(seen, { holdsA: 3, holdsB: 2, slotsA: 5, slotsB: 2 }, 'all reservations and slots held at the moment of the crash');
  t.equal(probe.total(a.id), A_START - 1 - 3, 'A: 3 credits on hold');
  t.equal(freeCalls(), B_FREE - 1 - 2, 'B: 2 free calls on hold');

  // Let one of them finish (the worker then starts the next), and crash right after.
  const firstDone = await Promise.race([...inflightA, ...inflightB].map((u) => u.outcome));
  t.equal(firstDone.res?.status, 200, 'one in-flight request returned 200 before the crash');
  // The server writes the 200 just before it releases that request's slot: wait for the release so the
  // slot count below is exact (the next removal has only just started, and takes seconds).
  await pollUntil(() => probe.slots(a.id).count + probe.slots(b.id).count <= 6, 'the finished request to release its slot', 10_000);

  await first.kill9();
  t.pass('server killed with SIGKILL');
  const outA: Outcome[] = await Promise.all(inflightA.map((u) => u.outcome));
  const outB: Outcome[] = await Promise.all(inflightB.map((u) => u.outcome));
  const outSlot: Outcome[] = await Promise.all(slotOnly.map((u) => u.outcome));
  t.comment(`in-flight outcomes A ${JSON.stringify(histogram(outA))}, B ${JSON.stringify(histogram(outB))}, slot-only ${JSON.stringify(histogram(outSlot))}`);
  for (const o of [...outA, ...outB, ...outSlot]) t.ok(o.res === null || o.res.status === 200, 'each in-flight request either got 200 or lost its connection');
  const doneA = outA.filter((o) => o.res?.status === 200).length;
  const doneB = outB.filter((o) => o.res?.status === 200).length;
  t.equal(outSlot.filter((o) => o.res !== null).length, 0, 'slot-only requests got no answer');

  // The dead process's holds are still in the ledger until someone reconciles.
  t.equal(probe.holds(a.id), 3 - doneA, 'A: holds of the dead process remain until restart');
  t.equal(probe.holds(b.id), 2 - doneB, 'B: holds of the dead process remain until restart');

  const second = await serve(t, { dataDir });
  const reconciled = /ledger: refunded (\d+) hold\(s\) and freed (\d+) slot\(s\)/.exec(second.output());
  t.ok(reconciled, `restart logged the reconcile: ${second.output().trim()}`);
  if (reconciled) {
    t.equal(Number(reconciled[1]), 5 - doneA - doneB, 'every unfinished reservation refunded');
    t.equal(Number(reconciled[2]), 7 - doneA - doneB, 'every slot of the dead process freed');
  }

  const expectedA = A_START - 1 - doneA;
  const expectedB = B_FREE - 1 - doneB;
  t.equal(probe.total(a.id), expectedA, `A: start ${A_START} minus the ${1 + doneA} request(s) that returned 200`);
  t.equal(freeCalls(), expectedB, `B: ${B_FREE} free calls minus the ${1 + doneB} that returned 200`);
  t.equal(probe.usage(a.id), 1 + doneA, 'A: one usage record per 200');
  t.equal(probe.usage(b.id), 1 + doneB, 'B: one usage record per 200');
  t.equal(probe.holds(a.id) + probe.holds(b.id), 0, 'no holds left');
  t.equal(probe.slots(a.id).count + probe.slots(b.id).count, 0, 'no slots left');

  const acct = await get(`${second.base}/v1.0/account`, { 'X-Api-Key': a.apiKey });
  t.equal(acct.res?.status, 200, 'GET /v1.0/account after restart');
  t.equal(acct.res?.json().data.attributes.credits.total, expectedA, 'GET /v1.0/account agrees');
  const acctB = await get(`${second.base}/v1.0/account`, { 'X-Api-Key': b.apiKey });
  t.equal(acctB.res?.json().data.attributes.api.free_calls, expectedB, 'free calls agree');

  // The restarted server works and charges normally.
  const after = await removeBg(second.base, a.apiKey, image, { size: 'full' });
  t.equal(after.res?.status, 200, 'a request after the restart succeeds');
  t.equal(probe.total(a.id), expectedA - 1, 'and is charged one credit');
});
