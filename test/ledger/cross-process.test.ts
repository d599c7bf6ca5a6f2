// Several processes on one data folder: a reserve race, kill -9 mid-request + reconcile, the slot cap,
// and a revocation seen by another process on its very next call.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { forkLedgerChild, CHILD_SCRIPT } from './child-process.js';
import { openLmdbLedger } from '../../src/ledger/lmdb-ledger.js';

t.test('two processes race for k credits: exactly k reserves succeed', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  const k = 300;
  const { account, apiKey } = ledger.createAccount({ subscription: k, freeCallsPerMonth: 0 });
  const children = await Promise.all([forkLedgerChild(dir), forkLedgerChild(dir)]);
  const results = await Promise.all(children.map((c) => c.ask({ op: 'race', key: apiKey, attempts: 400 })));
  for (const c of children) c.proc.send({ op: 'exit' });
  await Promise.all(children.map((c) => c.exited));

  const ok = results.reduce((n, r) => n + (r.ok as number), 0);
  const short = results.reduce((n, r) => n + (r.short as number), 0);
  t.equal(ok, k, 'successes across both processes');
  t.equal(short, 800 - k);
  t.equal(ledger.balances(account.id).total, 0);
});

t.test('kill -9 with a hold and a slot: reconcile refunds and frees', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  const { account, apiKey } = ledger.createAccount({ subscription: 5, payg: 2, freeCallsPerMonth: 0, concurrency: 1 });
  const live = ledger.acquireSlot(account);
  live!.release();

  const child = await forkLedgerChild(dir);
  const held = await child.ask({ op: 'hold', key: apiKey });
  t.equal(held.slot, true);
  t.match(ledger.balances(account.id), { subscription: 4, total: 6 });
  t.same(ledger.reconcile(), { holds: 0, credits: 0, freeCalls: 0, slots: 0 }, 'live owners untouched');

  child.proc.kill('SIGKILL');
  await child.exited;
  t.same(ledger.reconcile(), { holds: 1, credits: 1, freeCalls: 0, slots: 1 });
  t.match(ledger.balances(account.id), { subscription: 5, payg: 2, total: 7 }, 'nothing lost, nothing invented');
  const slot = ledger.acquireSlot(account);
  t.ok(slot, 'slot free again');
  slot!.release();
  t.same(ledger.reconcile(), { holds: 0, credits: 0, freeCalls: 0, slots: 0 }, 'second run is a no-op');
});

t.test('an account at its cap reclaims slots of dead processes by itself', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  const { account, apiKey } = ledger.createAccount({ subscription: 1, concurrency: 1 });
  const child = await forkLedgerChild(dir);
  t.match(await child.ask({ op: 'slots', key: apiKey, n: 1 }), { held: 1 });
  t.equal(ledger.acquireSlot(account), null, 'at cap while the holder lives');
  child.proc.kill('SIGKILL');
  await child.exited;
  const slot = ledger.acquireSlot(account);
  t.ok(slot, 'dead holder reclaimed');
  slot!.release();
});

t.test('the concurrency cap holds across processes', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  const { account, apiKey } = ledger.createAccount({ concurrency: 2 });
  const child = await forkLedgerChild(dir);
  t.match(await child.ask({ op: 'slots', key: apiKey, n: 3 }), { held: 2 }, 'child gets the cap, no more');
  t.equal(ledger.acquireSlot(account), null, 'parent is refused');
  t.match(await child.ask({ op: 'release-one' }), { held: 1 });
  const mine = ledger.acquireSlot(account);
  t.ok(mine, 'freed slot is usable by another process');
  t.equal(ledger.acquireSlot(account), null);
  mine!.release();
  mine!.release(); // idempotent
  t.ok(ledger.acquireSlot(account), 'one free after a double release');
  child.proc.send({ op: 'exit' });
  await child.exited;
});

t.test('a revocation by another process applies to the next call, even in the same event turn', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  const { apiKey } = ledger.createAccount({ label: 'soon revoked' });
  const child = await forkLedgerChild(dir);
  t.ok((await child.ask({ op: 'auth', key: apiKey })).account, 'other process sees the key');

  t.ok(ledger.authenticate(apiKey), 'valid before');
  // execFileSync blocks this turn: only an explicit snapshot reset can reveal the child's commit.
  execFileSync(process.execPath, [CHILD_SCRIPT, dir, 'revoke', apiKey]);
  t.equal(ledger.authenticate(apiKey), null, 'revoked on the next call');
  t.match(await child.ask({ op: 'auth', key: apiKey }), { account: null }, 'and in the other live process');
  child.proc.send({ op: 'exit' });
  await child.exited;
});
