// Acceptance for the PostgreSQL ledger: three `cutout serve` nodes on their own ports share one database
// (started by the test). They migrate the empty database at the same moment; k credits and N ≫ k
// concurrent requests spread over the nodes give exactly k 200s and N−k 402s; a concurrency cap of 2
// holds across the nodes; a key revoked with `cutout keys revoke --ledger …` gets 403 on every node at
// once; and after `kill -9` of a node holding slots and holds, the other nodes keep serving, the slots
// come back once the lease lapses, and the refund is exact and made once.
//
// Requests are held waiting for their image download to make them contend (see ledger-race.test.ts); every wait is a poll or
// an event with a generous bound, never a timed assertion.

import t, { type Test } from 'tap';
import pg from 'pg';
import { makeImage } from '../helpers/images.js';
import {
  cli,
  errorCode,
  get,
  heldRequest,
  histogram,
  makeDataDir,
  overallDeadline,
  removeBg,
  serve,
  type Outcome,
  type Served,
} from '../helpers/ledger-procs.js';
import { startPostgres } from '../helpers/postgres.js';
import { pollUntilAsync } from '../helpers/poll.js';
import { openPgLedger } from '../../src/ledger/pg/pg-ledger.js';
import { MIGRATIONS } from '../../src/ledger/pg/migrations.js';

const LEASE_S = 5;
overallDeadline(t, 580_000);

const db = await startPostgres(t);
const url = await db.createDatabase('three_nodes');
const image = await makeImage('jpeg', 64, 64);

// All three start on the empty database at once: each runs the migrations under the advisory lock.
const nodes: Served[] = await Promise.all(
  ['a', 'b', 'c'].map(() => serve(t, { dataDir: makeDataDir(t), extraArgs: ['--ledger', url, '--ledger-lease', String(LEASE_S)], startTimeoutMs: 240_000 })),
);
// The test's own handle: a long lease, so its timer never sweeps; only the nodes do.
const probe = await openPgLedger(url, { leaseMs: 3_600_000 });
t.teardown(() => probe.close());

const create = async (spec: { subscription: number; concurrency: number }) => {
  const { account, apiKey } = await probe.createAccount({ label: 'three-nodes', freeCallsPerMonth: 0, ratePerMinute: 100_000, ...spec });
  return { id: account.id, apiKey };
};
const total = async (id: string) => (await probe.balances(id)).total;
const usageOf = async (id: string) => (await probe.summarizeUsage(0)).find((u) => u.accountId === id);

t.test('three nodes migrated one empty database at the same moment', async (t) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query('SELECT version FROM cutout.schema_migrations ORDER BY version');
  await c.end();
  t.same(
    rows,
    MIGRATIONS.map((m) => ({ version: m.version })),
    'each version applied once',
  );
  for (const n of nodes)
    t.match(n.output(), /cutout listening on http:\/\/127\.0\.0\.1:\d+ \(data: .*; ledger: postgres:\/\/cutout@127\.0\.0\.1:\d+\/three_nodes\)/);
});

t.test('k credits, N concurrent requests over three nodes: exactly k 200s and N−k 402s', async (t) => {
  const K = 3;
  const N = 15;
  const { id, apiKey } = await create({ subscription: K, concurrency: 100 });
  const uploads = Array.from({ length: N }, (_, i) => heldRequest(nodes[i % 3]!.base, apiKey, image, { size: 'preview' }));
  const held = await pollUntilAsync(
    async () => {
      const f = await probe.inFlight(id);
      return f.slotOwners.length === N || uploads.some((u) => u.done()) ? f : null;
    },
    `${N} held slots`,
    120_000,
  );
  t.equal(held.slotOwners.length, N, `all ${N} requests hold a slot before any body completes`);
  t.equal(new Set(held.slotOwners).size, 3, 'on three nodes');
  t.equal(await total(id), K, 'nothing reserved yet');

  for (const u of uploads) u.finish();
  const outcomes: Outcome[] = await Promise.all(uploads.map((u) => u.outcome));
  t.comment(`statuses: ${JSON.stringify(histogram(outcomes))}`);
  t.same(histogram(outcomes), { 200: K, 402: N - K }, `exactly ${K} × 200 and ${N - K} × 402`);
  for (const o of outcomes) if (o.res?.status === 402) t.equal(errorCode(o.res), 'insufficient_credits');
  t.equal(await total(id), 0, 'balance 0');
  t.match(await usageOf(id), { requests: K, credits: K }, `${K} usage entries`);
  await pollUntilAsync(async () => (await probe.inFlight(id)).slotOwners.length === 0, 'slots released', 30_000);
  t.same(await probe.inFlight(id), { holds: 0, slotOwners: [] }, 'no hold, no slot left');
});

t.test('a concurrency cap of 2 holds across the nodes', async (t) => {
  const { id, apiKey } = await create({ subscription: 100, concurrency: 2 });
  // One held request per node: two get slots, the third is refused at once, whichever node it reached.
  const uploads = nodes.map((n) => heldRequest(n.base, apiKey, image, { size: 'preview' }));
  const state = await pollUntilAsync(
    async () => {
      const s = { slots: (await probe.inFlight(id)).slotOwners.length, answered: uploads.filter((u) => u.done()).length };
      return (s.slots === 2 && s.answered >= 1) || s.answered > 1 ? s : null;
    },
    'two held slots and one refusal',
    120_000,
  );
  t.same(state, { slots: 2, answered: 1 }, 'two hold the slots, one was answered at once');
  const refused = uploads.find((u) => u.done())!;
  t.equal((await refused.outcome).res?.status, 429, 'the third gets 429');
  const rest = uploads.filter((u) => u !== refused);
  for (const u of rest) u.finish();
  t.same(histogram(await Promise.all(rest.map((u) => u.outcome))), { 200: 2 });

  // A burst of 12 whole requests over the nodes: sampled all along, never more than 2 slots live.
  let maxSeen = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      maxSeen = Math.max(maxSeen, (await probe.inFlight(id)).slotOwners.length);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => removeBg(nodes[i % 3]!.base, apiKey, image, { size: 'preview' })));
  sampling = false;
  await sampler;
  const h = histogram(burst);
  t.comment(`burst statuses: ${JSON.stringify(h)}; most slots seen at once: ${maxSeen}`);
  t.same(
    Object.keys(h).filter((s) => s !== '200' && s !== '429'),
    [],
    'only 200s and 429s',
  );
  t.ok((h['200'] ?? 0) >= 1, 'some were served');
  t.ok(maxSeen <= 2, `never more than 2 in flight (saw ${maxSeen})`);
  t.equal(await total(id), 100 - 2 - (h['200'] ?? 0), 'one credit per 200');
});

t.test('a key revoked with `cutout keys revoke --ledger` gets 403 on every node at once', async (t) => {
  const { id, apiKey } = await create({ subscription: 10, concurrency: 10 });
  for (const n of nodes) t.equal((await get(`${n.base}/v1.0/account`, { 'X-Api-Key': apiKey })).res?.status, 200, `valid on ${n.base}`);
  const revoked = await cli(['keys', 'revoke', id, '--ledger', url]);
  t.equal(revoked.code, 0, revoked.stderr);
  t.match(revoked.stdout, `revoked 1 key(s) of ${id}`);
  // The very first request to each node after the revocation is refused.
  const after = await Promise.all(nodes.map((n) => removeBg(n.base, apiKey, image, { size: 'preview' })));
  t.same(histogram(after), { 403: 3 }, '403 on all three nodes');
  for (const o of after) t.equal(errorCode(o.res), 'auth_failed');
  const listed = await cli(['keys', 'list', '--json', '--ledger', url]);
  t.match(JSON.parse(listed.stdout), [{ revoked: false }, { revoked: false }, { id, revoked: true }]);
  const usage = await cli(['usage', '--json'], 30_000, { CUTOUT_LEDGER_URL: url });
  t.equal(usage.code, 0, usage.stderr);
  t.ok((JSON.parse(usage.stdout) as { accounts: unknown[] }).accounts.length >= 2, 'cutout usage reads the shared log (CUTOUT_LEDGER_URL)');
});

t.test('kill -9 of a node holding slots and holds: the others keep serving, its leases lapse, refunds exact and once', async (t) => {
  const START = 20;
  const { id, apiKey } = await create({ subscription: START, concurrency: 8 });
  const [a, b, c] = nodes as [Served, Served, Served];
  const reconciledBefore = [a, b].map((n) => reconciled(n.output()));

  // On c: 3 whole requests (one runs on its single worker, the others wait holding their credits) and
  // 2 requests waiting for their image download, which hold only a slot.
  const running = Array.from({ length: 3 }, () => heldRequest(c.base, apiKey, image, { size: 'preview' }));
  const slotOnly = Array.from({ length: 2 }, () => heldRequest(c.base, apiKey, image, { size: 'preview' }));
  for (const u of running) u.finish();
  const atKill = await pollUntilAsync(
    async () => {
      const f = await probe.inFlight(id);
      return (f.holds >= 2 && f.slotOwners.length >= 4) || running.some((u) => u.done()) ? f : null;
    },
    'node c to hold slots and credits',
    120_000,
  );
  await c.kill9();
  // Right away, while c's last renewal still runs (lapsed rows count too: nothing is live-filtered).
  const left = await countLeases(id);
  const outcomes = await Promise.all([...running, ...slotOnly].map((u) => u.outcome));
  const servedByC = outcomes.filter((o) => o.res?.status === 200).length;
  t.comment(`at the kill: ${atKill.holds} hold(s), ${atKill.slotOwners.length} slot(s); ${servedByC} request(s) on c returned 200 before it died`);
  for (const o of outcomes) t.ok(o.res === null || o.res.status === 200, 'each request on c got 200 or lost its connection');
  t.ok(left.holds >= 1 && left.slots >= 2, `c still holds something right after the kill (${left.holds} hold(s), ${left.slots} slot(s))`);

  // The others keep serving while c's leases run out.
  const during = await Promise.all([removeBg(a.base, apiKey, image, { size: 'preview' }), removeBg(b.base, apiKey, image, { size: 'preview' })]);
  t.same(histogram(during), { 200: 2 }, 'a and b serve while c is dead');

  await pollUntilAsync(
    async () => {
      const f = await probe.inFlight(id);
      return f.holds === 0 && f.slotOwners.length === 0;
    },
    `c's leases to lapse (${LEASE_S} s) and be swept`,
    120_000,
  );
  t.pass('every slot and hold of c came back');
  t.equal(await total(id), START - servedByC - 2, `balance: ${START} minus exactly the ${servedByC + 2} requests that returned 200`);
  t.match(await usageOf(id), { requests: servedByC + 2 }, 'one usage entry per 200');

  // Exactly once: what a and b logged as swept adds up to what c left (no other account had leases).
  await pollUntilAsync(
    async () => {
      const now = [a, b].map((n) => reconciled(n.output()));
      return now[0]!.holds + now[1]!.holds - reconciledBefore[0]!.holds - reconciledBefore[1]!.holds === left.holds;
    },
    'the sweep to be logged',
    30_000,
  ).catch(() => false);
  const swept = [a, b].map((n, i) => ({
    holds: reconciled(n.output()).holds - reconciledBefore[i]!.holds,
    slots: reconciled(n.output()).slots - reconciledBefore[i]!.slots,
  }));
  t.same(
    { holds: swept[0]!.holds + swept[1]!.holds, slots: swept[0]!.slots + swept[1]!.slots },
    left,
    `the sweeps on a and b gave back each lease once (${JSON.stringify(swept)})`,
  );

  const after = await Promise.all([a, b].map((n) => removeBg(n.base, apiKey, image, { size: 'preview' })));
  t.same(histogram(after), { 200: 2 }, 'the survivors keep serving after the sweep');
});

/** Holds and slot rows of the account in the database, lapsed or not. */
async function countLeases(accountId: string): Promise<{ holds: number; slots: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ holds: string; slots: string }>(
      'SELECT (SELECT count(*) FROM cutout.holds WHERE account_id = $1) AS holds, (SELECT count(*) FROM cutout.slots WHERE account_id = $1) AS slots',
      [accountId],
    );
    return { holds: Number(rows[0]!.holds), slots: Number(rows[0]!.slots) };
  } finally {
    await c.end();
  }
}

/** Totals of the "ledger: refunded N hold(s) and freed M slot(s) of lapsed leases" lines a node printed. */
function reconciled(output: string): { holds: number; slots: number } {
  let holds = 0;
  let slots = 0;
  for (const m of output.matchAll(/ledger: refunded (\d+) hold\(s\) and freed (\d+) slot\(s\) of lapsed leases/g)) {
    holds += Number(m[1]);
    slots += Number(m[2]);
  }
  return { holds, slots };
}

export type { Test };
