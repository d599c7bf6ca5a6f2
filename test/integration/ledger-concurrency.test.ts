// Acceptance: with a concurrency cap of c, c+1 concurrent slow requests give exactly one 429 with
// `Retry-After` (an integer >= 1); after they finish, the next request is accepted (200). In one process
// and across `--processes 2` (the cap is an LMDB record, so it holds across processes).
//
// "Slow" without timing: each request names an image URL that the test's image host answers only when
// told (heldRequest), so it holds its slot (taken once its body is in) for as long as the test wants;
// then the images are sent.
import t, { type Test } from 'tap';
import { makeImage } from '../helpers/images.js';
import { errorCode, heldRequest, histogram, makeDataDir, openProbe, overallDeadline, pollUntil, removeBg, serve } from '../helpers/ledger-procs.js';

const C = 2;
const CREDITS = 10;

overallDeadline(t, 540_000);

async function cap(t: Test, processes: number): Promise<void> {
  const dataDir = makeDataDir(t);
  const probe = openProbe(t, dataDir);
  const { id, apiKey } = probe.create({ subscription: CREDITS, freeCallsPerMonth: 0, concurrency: C });
  const srv = await serve(t, { dataDir, processes });
  const image = await makeImage('jpeg', 64, 64);

  const uploads = Array.from({ length: C + 1 }, () => heldRequest(srv.base, apiKey, image, { size: 'preview' }));
  const state = await pollUntil(() => {
    const s = { slots: probe.slots(id).count, answered: uploads.filter((u) => u.done()).length };
    return (s.slots === C && s.answered >= 1) || s.answered > 1 ? s : null;
  }, `${C} held slots and one refusal`);
  t.same(state, { slots: C, answered: 1 }, `${C} requests hold the slots, exactly one was answered at once`);

  const refused = uploads.find((u) => u.done())!;
  const res = (await refused.outcome).res;
  t.equal(res?.status, 429, 'the extra request gets 429');
  t.equal(errorCode(res), 'rate_limit_exceeded', 'code rate_limit_exceeded');
  const retryAfter = String(res?.headers['retry-after'] ?? '');
  t.match(retryAfter, /^\d+$/, `Retry-After is an integer (${retryAfter})`);
  t.ok(Number(retryAfter) >= 1, 'Retry-After >= 1');
  t.equal(probe.total(id), CREDITS, 'nothing reserved yet');

  const rest = uploads.filter((u) => u !== refused);
  for (const u of rest) u.finish();
  const outcomes = await Promise.all(rest.map((u) => u.outcome));
  t.same(histogram(outcomes), { 200: C }, `the ${C} held requests complete with 200`);
  t.equal(probe.total(id), CREDITS - C, `${C} credits charged`);

  const next = await removeBg(srv.base, apiKey, image, { size: 'preview' });
  t.equal(next.res?.status, 200, 'the next request is accepted');
  t.equal(probe.total(id), CREDITS - C - 1, 'and charged');
  t.equal(probe.usage(id), C + 1, 'one usage record per 200, none for the 429');
  await pollUntil(() => probe.slots(id).count === 0, 'slots released', 10_000);
  t.pass('every slot released');
}

t.test(`cap ${C}, one process`, (t) => cap(t, 1));
t.test(`cap ${C}, two processes sharing the cap`, (t) => cap(t, 2));
