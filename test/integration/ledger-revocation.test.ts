// Acceptance: a revoked key gets 403 `auth_failed` in every process within one request. Two server
// processes share one port (SO_REUSEPORT) and one data folder; keys are revoked while they run, once from
// the test process (`openLedger(dir).revoke(key)`) and once with `cutout keys revoke <account-id>`.
// Every request after the revocation, the very first included, must be refused; many fresh connections
// are sent so that both processes answer some of them.
import t, { type Test } from 'tap';
import { makeImage } from '../helpers/images.js';
import {
  cli,
  errorCode,
  get,
  heldRequest,
  histogram,
  makeDataDir,
  openProbe,
  overallDeadline,
  pollUntil,
  removeBg,
  serve,
  type LedgerProbe,
  type Outcome,
} from '../helpers/ledger-procs.js';

const PROCESSES = 2;
/** Fresh connections per check; with two processes the chance that one process sees none is ~2^-31. */
const ROUNDS = 16;

overallDeadline(t, 540_000);

function assertAllRefused(t: Test, outcomes: Outcome[], what: string): void {
  t.same(histogram(outcomes), { 403: outcomes.length }, `${what}: all ${outcomes.length} refused with 403`);
  const codes = new Set(outcomes.map((o) => errorCode(o.res)));
  t.same([...codes], ['auth_failed'], `${what}: code auth_failed`);
  const titles = new Set(outcomes.map((o) => (o.res ? (o.res.json() as { errors: Array<{ title: string }> }).errors[0]?.title : undefined)));
  t.same([...titles], ['API Key invalid'], `${what}: title "API Key invalid"`);
}

/** ROUNDS account reads and ROUNDS removals, each on its own connection; the first one goes out alone. */
async function probeKey(base: string, apiKey: string, image: Buffer): Promise<Outcome[]> {
  const first = await removeBg(base, apiKey, image, { size: 'preview' }, 60_000);
  const reads = Array.from({ length: ROUNDS }, () => get(`${base}/v1.0/account`, { 'X-Api-Key': apiKey }));
  const removals = Array.from({ length: ROUNDS - 1 }, () => removeBg(base, apiKey, image, { size: 'preview' }, 60_000));
  return [first, ...(await Promise.all([...reads, ...removals]))];
}

/** Both server processes take connections on the shared port: hold requests until two owner pids show. */
async function bothProcessesServe(t: Test, probe: LedgerProbe, base: string, id: string, apiKey: string, image: Buffer): Promise<void> {
  const held = [];
  const pids = new Set<number>();
  for (let i = 0; i < 24 && pids.size < PROCESSES; i++) {
    const u = heldRequest(base, apiKey, image, { size: 'preview' }, 60_000);
    held.push(u);
    const s = await pollUntil(() => (probe.slots(id).count === held.length || u.done() ? probe.slots(id) : null), 'a held slot', 10_000);
    for (const pid of s.pids) pids.add(pid);
  }
  for (const u of held) u.abort();
  await Promise.all(held.map((u) => u.outcome));
  await pollUntil(() => probe.slots(id).count === 0, 'aborted requests to free their slots', 10_000);
  t.equal(pids.size, PROCESSES, `connections reach both server processes (pids ${[...pids].join(', ')})`);
}

t.test('revocation reaches every process on the next request', async (t) => {
  const dataDir = makeDataDir(t);
  const probe = openProbe(t, dataDir);
  const viaLedger = probe.create({ label: 'revoke-via-ledger', subscription: 5, concurrency: 64 });
  const viaCli = probe.create({ label: 'revoke-via-cli', subscription: 5, concurrency: 64 });
  const control = probe.create({ label: 'control', subscription: 5, concurrency: 64 });
  const srv = await serve(t, { dataDir, processes: PROCESSES });
  const image = await makeImage('jpeg', 64, 64);

  await bothProcessesServe(t, probe, srv.base, viaLedger.id, viaLedger.apiKey, image);

  // Before: every key works in every process (reads warm whatever a process might cache).
  for (const acct of [viaLedger, viaCli, control]) {
    const reads = await Promise.all(Array.from({ length: ROUNDS }, () => get(`${srv.base}/v1.0/account`, { 'X-Api-Key': acct.apiKey })));
    t.same(histogram(reads), { 200: ROUNDS }, 'key accepted before revocation');
  }
  const before = await removeBg(srv.base, viaLedger.apiKey, image, { size: 'preview' });
  t.equal(before.res?.status, 200, 'a removal with the key works before revocation');
  t.equal(probe.total(viaLedger.id), 4, 'and is charged');

  // Revoke from the test process while the servers run.
  t.equal(probe.ledger.revoke(viaLedger.apiKey), 1, 'one key revoked via openLedger(dir).revoke');
  assertAllRefused(t, await probeKey(srv.base, viaLedger.apiKey, image), 'revoked via the ledger');
  t.equal(probe.total(viaLedger.id), 4, 'refused requests are not charged');

  // Revoke with the CLI (by account id) while the servers run.
  const out = await cli(['keys', 'revoke', viaCli.id, '--data', dataDir, '--json']);
  t.equal(out.code, 0, `cutout keys revoke exits 0 ${out.stderr}`);
  t.same(JSON.parse(out.stdout), { accountId: viaCli.id, revoked: 1 }, 'the CLI revoked the account key');
  assertAllRefused(t, await probeKey(srv.base, viaCli.apiKey, image), 'revoked via cutout keys revoke');
  t.equal(probe.total(viaCli.id), 5, 'refused requests are not charged');

  // Other keys are unaffected.
  const reads = await Promise.all(Array.from({ length: ROUNDS }, () => get(`${srv.base}/v1.0/account`, { 'X-Api-Key': control.apiKey })));
  t.same(histogram(reads), { 200: ROUNDS }, 'an unrevoked key still works everywhere');
  const ok = await removeBg(srv.base, control.apiKey, image, { size: 'preview' });
  t.equal(ok.res?.status, 200, 'and can still remove backgrounds');
  t.equal(probe.total(control.id), 4, 'charged normally');
  const list = await cli(['keys', 'list', '--data', dataDir, '--json']);
  const revoked = (JSON.parse(list.stdout) as Array<{ id: string; revoked: boolean }>)
    .filter((a) => a.revoked)
    .map((a) => a.id)
    .sort();
  t.same(revoked, [viaLedger.id, viaCli.id].sort(), 'keys list shows exactly the two revoked accounts');
});
