// Pricing, spend order, free calls and their monthly reset, refunds, idempotency and an in-process race.

import t, { type Test } from 'tap';
import { openLedger } from '../../src/ledger/lmdb-ledger.js';
import { InsufficientCreditsError } from '../../src/ledger/ledger.js';
import { PRICES } from '../../src/ledger/prices.js';

const JAN = Date.UTC(2025, 0, 15, 12);
const FEB = Date.UTC(2025, 1, 1, 0, 0, 1);

function setup(t: Test, startMs = JAN) {
  const clock = { ms: startMs };
  const ledger = openLedger(t.testdir(), { now: () => clock.ms });
  t.teardown(() => ledger.close());
  return { ledger, clock };
}

t.test('prices are integers and every tier costs something', async (t) => {
  for (const [tier, price] of Object.entries(PRICES)) t.ok(Number.isSafeInteger(price) && price > 0, tier);
});

t.test('credits are spent subscription, then payg, then enterprise; refunds go back where they came from', async (t) => {
  const { ledger } = setup(t);
  const { account } = ledger.createAccount({ subscription: 1, payg: 1, enterprise: 1, freeCallsPerMonth: 0 });
  const r1 = await ledger.reserve(account, 'full');
  t.match(ledger.balances(account.id), { subscription: 0, payg: 1, enterprise: 1, total: 2 });
  const r2 = await ledger.reserve(account, 'hd');
  t.match(ledger.balances(account.id), { subscription: 0, payg: 0, enterprise: 1, total: 1 });
  const r3 = await ledger.reserve(account, 'medium');
  t.match(ledger.balances(account.id), { subscription: 0, payg: 0, enterprise: 0, total: 0 });
  t.same([r1.credits, r2.credits, r3.credits], [1, 1, 1]);

  await ledger.refund(r2);
  t.match(ledger.balances(account.id), { subscription: 0, payg: 1, enterprise: 0 }, 'payg hold returns to payg');
  await ledger.refund(r3);
  t.match(ledger.balances(account.id), { subscription: 0, payg: 1, enterprise: 1 }, 'enterprise hold returns to enterprise');
  await ledger.refund(r1);
  t.match(ledger.balances(account.id), { subscription: 1, payg: 1, enterprise: 1, total: 3 });
});

t.test('preview uses a free call while one is left, then credits', async (t) => {
  const { ledger } = setup(t);
  const { account } = ledger.createAccount({ subscription: 1, freeCallsPerMonth: 1 });
  const free = await ledger.reserve(account, 'preview');
  t.match(free, { size: 'preview', credits: 0, freeCall: true });
  t.match(ledger.balances(account.id), { total: 1, freeCalls: 0 });
  const paid = await ledger.reserve(account, 'preview');
  t.match(paid, { size: 'preview', credits: 1, freeCall: false });
  t.match(ledger.balances(account.id), { total: 0, freeCalls: 0 });
  await t.rejects(ledger.reserve(account, 'preview'), { code: 'insufficient_credits' });
});

t.test('free calls never pay for non-preview tiers', async (t) => {
  const { ledger } = setup(t);
  const { account } = ledger.createAccount({ subscription: 0, freeCallsPerMonth: 5 });
  for (const size of ['full', 'hd', 'medium', '50MP'] as const) {
    await t.rejects(ledger.reserve(account, size), { code: 'insufficient_credits' }, size);
  }
  t.match(ledger.balances(account.id), { total: 0, freeCalls: 5 }, 'rejections change nothing');
});

t.test('auto: full when a credit is there, else preview on a free call, else 402', async (t) => {
  const { ledger } = setup(t);
  const { account } = ledger.createAccount({ subscription: 1, freeCallsPerMonth: 1 });
  t.match(await ledger.reserve(account, 'auto'), { size: 'full', credits: 1, freeCall: false });
  t.match(await ledger.reserve(account, 'auto'), { size: 'preview', credits: 0, freeCall: true });
  const err = await ledger.reserve(account, 'auto').catch((e: unknown) => e);
  t.ok(err instanceof InsufficientCreditsError, 'an InsufficientCreditsError');
  t.equal((err as InsufficientCreditsError).code, 'insufficient_credits');
  t.match(ledger.balances(account.id), { total: 0, freeCalls: 0 });
});

t.test('free calls reset at the UTC month boundary', async (t) => {
  const { ledger, clock } = setup(t);
  const { account } = ledger.createAccount({ subscription: 0, freeCallsPerMonth: 2 });
  const jan1 = await ledger.reserve(account, 'preview');
  await ledger.settle(jan1, { outputPixels: 250_000, status: 200 });
  const jan2 = await ledger.reserve(account, 'preview');
  t.equal(ledger.balances(account.id).freeCalls, 0);
  await t.rejects(ledger.reserve(account, 'preview'), { code: 'insufficient_credits' });

  clock.ms = Date.UTC(2025, 0, 31, 23, 59, 59);
  t.equal(ledger.balances(account.id).freeCalls, 0, 'still January');
  clock.ms = FEB;
  t.equal(ledger.balances(account.id).freeCalls, 2, 'February starts fresh');

  // A January hold refunded in February must not inflate February's allowance.
  await ledger.refund(jan2);
  t.equal(ledger.balances(account.id).freeCalls, 2);
  const feb = await ledger.reserve(account, 'preview');
  t.equal(feb.freeCall, true);
  t.equal(ledger.balances(account.id).freeCalls, 1);
  await ledger.refund(feb);
  t.equal(ledger.balances(account.id).freeCalls, 2, 'a same-month refund returns the free call');
});

t.test('settle and refund are idempotent; settle logs usage once', async (t) => {
  const { ledger } = setup(t);
  const { account } = ledger.createAccount({ subscription: 3, freeCallsPerMonth: 0, label: 'idem' });
  const r = await ledger.reserve(account, 'full');
  await ledger.settle(r, { outputPixels: 2_000_000, status: 200 });
  await ledger.settle(r, { outputPixels: 2_000_000, status: 200 });
  await ledger.refund(r);
  t.equal(ledger.balances(account.id).total, 2, 'charged once, refund after settle is a no-op');

  const r2 = await ledger.reserve(account, 'full');
  await ledger.refund(r2);
  await ledger.refund(r2);
  await ledger.settle(r2, { outputPixels: 1, status: 200 });
  t.equal(ledger.balances(account.id).total, 2, 'refunded once, settle after refund is a no-op');

  t.same(ledger.summarizeUsage(0), [
    { accountId: account.id, label: 'idem', requests: 1, credits: 1, freeCalls: 0, outputMegapixels: 2, statuses: { '200': 1 } },
  ]);
});

t.test('in-process race: k credits, many concurrent reserves, exactly k succeed', async (t) => {
  const { ledger } = setup(t);
  const k = 25;
  const { account } = ledger.createAccount({ subscription: k, freeCallsPerMonth: 0 });
  const results = await Promise.allSettled(Array.from({ length: 400 }, () => ledger.reserve(account, 'auto')));
  const ok = results.filter((r) => r.status === 'fulfilled').length;
  const rejected = results.filter((r) => r.status === 'rejected' && r.reason instanceof InsufficientCreditsError).length;
  t.equal(ok, k);
  t.equal(rejected, 400 - k);
  t.equal(ledger.balances(account.id).total, 0);
});

t.test('bad account specs are refused', async (t) => {
  const { ledger } = setup(t);
  t.throws(() => ledger.createAccount({ subscription: -1 }), { code: 'invalid_ledger_input' });
  t.throws(() => ledger.createAccount({ concurrency: 0 }), { code: 'invalid_ledger_input' });
  t.throws(() => ledger.createAccount({ payg: 1.5 }), { code: 'invalid_ledger_input' });
  t.same(ledger.listAccounts(), []);
});
