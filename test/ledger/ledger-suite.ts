// The ledger's semantics, one suite for both backends (lmdb-suite.test.ts, pg-suite.test.ts): prices and
// spend order, refunds to their source, monthly free calls, idempotent settle/refund, the usage log,
// rate windows, storage quotas, the balance limit, and — through a second handle on the same store,
// standing for another process or node — races, the concurrency cap, the rate window and revocation.

import type { Test } from 'tap';
import { InsufficientCreditsError, type LedgerBackend } from '../../src/ledger/ledger.js';
import { PRICES } from '../../src/ledger/prices.js';
import { generateApiKey } from '../../src/ledger/key-hash.js';

export interface SuiteStore {
  /** A ledger on this test's own empty store. */
  ledger: LedgerBackend;
  /** Another handle on the same store (another process or node); closed by the suite's teardown. */
  other(): Promise<LedgerBackend>;
}

/** Opens a fresh, empty store for one test, with the given clock; closes it at the test's teardown. */
export type OpenStore = (t: Test, now?: () => number) => Promise<SuiteStore>;

const JAN = Date.UTC(2025, 0, 15, 12);
const FEB = Date.UTC(2025, 1, 1, 0, 0, 1);

export function ledgerSuite(t: Test, open: OpenStore): void {
  const setup = async (t: Test, startMs = JAN) => {
    const clock = { ms: startMs };
    const store = await open(t, () => clock.ms);
    return { ...store, clock };
  };

  t.test('prices are integers and every tier costs something', async (t) => {
    for (const [tier, price] of Object.entries(PRICES)) t.ok(Number.isSafeInteger(price) && price > 0, tier);
  });

  t.test('hashed keys: authenticate finds the account; unknown, empty and revoked keys are null', async (t) => {
    const { ledger } = await setup(t);
    const { account, apiKey } = await ledger.createAccount({ label: 'x', concurrency: 3, ratePerMinute: 7 });
    t.match(apiKey, /^ck_[0-9A-Za-z]{32}$/);
    t.same(await ledger.authenticate(apiKey), { id: account.id, label: 'x', concurrency: 3, ratePerMinute: 7 });
    t.equal(await ledger.authenticate(generateApiKey()), null);
    t.equal(await ledger.authenticate(''), null);
    t.equal(await ledger.resolveAccount(apiKey), account.id);
    t.equal(await ledger.resolveAccount(account.id), account.id);
    t.equal(await ledger.resolveAccount('acct_nope'), null);
    t.equal(await ledger.revoke(account.id), 1);
    t.equal(await ledger.authenticate(apiKey), null);
    t.equal(await ledger.revoke(apiKey), 0, 'already revoked');
    t.notOk(JSON.stringify(await ledger.listAccounts()).includes(apiKey.slice(3)), 'list never shows a key');
  });

  t.test('credits are spent subscription, then payg, then enterprise; refunds go back where they came from', async (t) => {
    const { ledger } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: 1, payg: 1, enterprise: 1, freeCallsPerMonth: 0 });
    const r1 = await ledger.reserve(account, 'full');
    t.match(await ledger.balances(account.id), { subscription: 0, payg: 1, enterprise: 1, total: 2 });
    const r2 = await ledger.reserve(account, 'hd');
    t.match(await ledger.balances(account.id), { subscription: 0, payg: 0, enterprise: 1, total: 1 });
    const r3 = await ledger.reserve(account, 'medium');
    t.match(await ledger.balances(account.id), { subscription: 0, payg: 0, enterprise: 0, total: 0 });
    t.same([r1.credits, r2.credits, r3.credits], [1, 1, 1]);

    await ledger.refund(r2);
    t.match(await ledger.balances(account.id), { subscription: 0, payg: 1, enterprise: 0 }, 'payg hold returns to payg');
    await ledger.refund(r3);
    t.match(await ledger.balances(account.id), { subscription: 0, payg: 1, enterprise: 1 }, 'enterprise hold returns to enterprise');
    await ledger.refund(r1);
    t.match(await ledger.balances(account.id), { subscription: 1, payg: 1, enterprise: 1, total: 3 });
  });

  t.test('preview uses a free call while one is left, then credits', async (t) => {
    const { ledger } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: 1, freeCallsPerMonth: 1 });
    t.match(await ledger.reserve(account, 'preview'), { size: 'preview', credits: 0, freeCall: true });
    t.match(await ledger.balances(account.id), { total: 1, freeCalls: 0 });
    t.match(await ledger.reserve(account, 'preview'), { size: 'preview', credits: 1, freeCall: false });
    t.match(await ledger.balances(account.id), { total: 0, freeCalls: 0 });
    await t.rejects(ledger.reserve(account, 'preview'), { code: 'insufficient_credits' });
  });

  t.test('free calls never pay for non-preview tiers', async (t) => {
    const { ledger } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: 0, freeCallsPerMonth: 5 });
    for (const size of ['full', 'hd', 'medium', '50MP'] as const) {
      await t.rejects(ledger.reserve(account, size), { code: 'insufficient_credits' }, size);
    }
    t.match(await ledger.balances(account.id), { total: 0, freeCalls: 5 }, 'rejections change nothing');
  });

  t.test('auto: full when a credit is there, else preview on a free call, else 402', async (t) => {
    const { ledger } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: 1, freeCallsPerMonth: 1 });
    t.match(await ledger.reserve(account, 'auto'), { size: 'full', credits: 1, freeCall: false });
    t.match(await ledger.reserve(account, 'auto'), { size: 'preview', credits: 0, freeCall: true });
    const err = await ledger.reserve(account, 'auto').catch((e: unknown) => e);
    t.ok(err instanceof InsufficientCreditsError, 'an InsufficientCreditsError');
    t.equal((err as InsufficientCreditsError).code, 'insufficient_credits');
    t.match(await ledger.balances(account.id), { total: 0, freeCalls: 0 });
  });

  t.test('free calls reset at the UTC month boundary', async (t) => {
    const { ledger, clock } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: 0, freeCallsPerMonth: 2 });
    const jan1 = await ledger.reserve(account, 'preview');
    await ledger.settle(jan1, { outputPixels: 250_000, status: 200 });
    const jan2 = await ledger.reserve(account, 'preview');
    t.equal((await ledger.balances(account.id)).freeCalls, 0);
    await t.rejects(ledger.reserve(account, 'preview'), { code: 'insufficient_credits' });

    clock.ms = Date.UTC(2025, 0, 31, 23, 59, 59);
    t.equal((await ledger.balances(account.id)).freeCalls, 0, 'still January');
    clock.ms = FEB;
    t.equal((await ledger.balances(account.id)).freeCalls, 2, 'February starts fresh');

    // A January hold refunded in February must not inflate February's allowance.
    await ledger.refund(jan2);
    t.equal((await ledger.balances(account.id)).freeCalls, 2);
    const feb = await ledger.reserve(account, 'preview');
    t.equal(feb.freeCall, true);
    t.equal((await ledger.balances(account.id)).freeCalls, 1);
    await ledger.refund(feb);
    t.equal((await ledger.balances(account.id)).freeCalls, 2, 'a same-month refund returns the free call');
  });

  t.test('settle and refund are idempotent; the usage log has one entry per settle', async (t) => {
    const { ledger } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: 3, freeCallsPerMonth: 1, label: 'idem' });
    const r = await ledger.reserve(account, 'full');
    await ledger.settle(r, { outputPixels: 2_000_000, status: 200 });
    await ledger.settle(r, { outputPixels: 2_000_000, status: 200 });
    await ledger.refund(r);
    t.equal((await ledger.balances(account.id)).total, 2, 'charged once, refund after settle is a no-op');

    const r2 = await ledger.reserve(account, 'full');
    await ledger.refund(r2);
    await ledger.refund(r2);
    await ledger.settle(r2, { outputPixels: 1, status: 200 });
    t.equal((await ledger.balances(account.id)).total, 2, 'refunded once, settle after refund is a no-op');

    await ledger.settle(await ledger.reserve(account, 'preview'), { outputPixels: 250_000, status: 200 });
    await ledger.settle(await ledger.reserve(account, 'full'), { outputPixels: 0, status: 500 });
    t.same(await ledger.summarizeUsage(0), [
      { accountId: account.id, label: 'idem', requests: 3, credits: 2, freeCalls: 1, outputMegapixels: 2.25, statuses: { '200': 2, '500': 1 } },
    ]);
    t.same(await ledger.summarizeUsage(JAN + 1), [], 'since: later entries only');
    t.same(await ledger.inFlight(account.id), { holds: 0, slotOwners: [] });
  });

  t.test('race: k credits, many concurrent reserves over two handles, exactly k succeed', async (t) => {
    const { ledger, other } = await setup(t);
    const second = await other();
    const k = 25;
    const { account } = await ledger.createAccount({ subscription: k, freeCallsPerMonth: 0 });
    const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => (i % 2 ? second : ledger).reserve(account, 'auto')));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const rejected = results.filter((r) => r.status === 'rejected' && r.reason instanceof InsufficientCreditsError).length;
    t.equal(ok, k);
    t.equal(rejected, 200 - k);
    t.equal((await ledger.balances(account.id)).total, 0);
    t.equal((await second.inFlight(account.id)).holds, k, 'one hold per success');
  });

  t.test('bad account specs are refused and nothing is written', async (t) => {
    const { ledger } = await setup(t);
    await t.rejects(ledger.createAccount({ subscription: -1 }), { code: 'invalid_ledger_input' });
    await t.rejects(ledger.createAccount({ concurrency: 0 }), { code: 'invalid_ledger_input' });
    await t.rejects(ledger.createAccount({ payg: 1.5 }), { code: 'invalid_ledger_input' });
    await t.rejects(ledger.addCredits('acct_x', 0), { code: 'invalid_ledger_input' });
    t.same(await ledger.listAccounts(), []);
  });

  t.test('balances stay exact: the total never passes 2^53-1', async (t) => {
    const { ledger } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: Number.MAX_SAFE_INTEGER - 1 });
    t.equal((await ledger.addCredits(account.id, 1, 'enterprise'))?.total, Number.MAX_SAFE_INTEGER, 'up to the limit is fine');
    await t.rejects(ledger.addCredits(account.id, 1, 'subscription'), {
      code: 'balance_limit',
      message: `Adding 1 to subscription would bring the account's total to 9007199254740992 credits, past the largest exact balance ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER); nothing was changed`,
    });
    await t.rejects(ledger.createAccount({ subscription: Number.MAX_SAFE_INTEGER, payg: 1 }), { code: 'balance_limit' });
    t.equal(await ledger.addCredits('acct_nope', 1), null, 'unknown account');
    const list = await ledger.listAccounts();
    t.equal(list.length, 1, 'no account created');
    t.match(list[0], { id: account.id, revoked: false, balances: { subscription: Number.MAX_SAFE_INTEGER - 1, enterprise: 1 } });
  });

  t.test('rate: fixed 60 s window aligned to the minute, shared by every handle', async (t) => {
    const windowStart = Math.floor(1_700_000_100_000 / 1000 / 60) * 60;
    const { ledger, other, clock } = await setup(t, (windowStart + 5) * 1000);
    const second = await other();
    const { account } = await ledger.createAccount({ ratePerMinute: 10 });

    t.same(await ledger.peekRate(account), { limit: 10, remaining: 10, reset: windowStart + 60 });
    t.same(await ledger.takeRate(account, 6), { ok: true, limit: 10, remaining: 4, reset: windowStart + 60 });
    t.same(await second.peekRate(account), { limit: 10, remaining: 4, reset: windowStart + 60 }, 'peek does not charge; the other handle sees it');

    t.same(await second.takeRate(account, 5), { ok: false, retryAfter: 55, limit: 10, remaining: 4, reset: windowStart + 60 });
    t.same(await second.takeRate(account, 4), { ok: true, limit: 10, remaining: 0, reset: windowStart + 60 }, 'a refusal costs nothing');
    t.same(await ledger.takeRate(account, 0), { ok: true, limit: 10, remaining: 0, reset: windowStart + 60 });

    clock.ms = (windowStart + 59) * 1000 + 900;
    const late = await ledger.takeRate(account, 1);
    t.equal(late.ok, false);
    t.equal(!late.ok && late.retryAfter, 1, 'Retry-After is at least 1');

    clock.ms = (windowStart + 60) * 1000;
    t.same(await ledger.takeRate(account, 3), { ok: true, limit: 10, remaining: 7, reset: windowStart + 120 }, 'next window');
  });

  t.test('rate: fractional units round up; the limit is per account', async (t) => {
    const { ledger } = await setup(t, 60_000 * 1000);
    const a = (await ledger.createAccount({ ratePerMinute: 2 })).account;
    const b = (await ledger.createAccount({ ratePerMinute: 2 })).account;
    t.match(await ledger.takeRate(a, 1.2), { ok: true, remaining: 0 });
    t.match(await ledger.takeRate(a, 1), { ok: false });
    t.match(await ledger.takeRate(b, 2), { ok: true, remaining: 0 });
  });

  t.test('the concurrency cap holds across handles; release is idempotent', async (t) => {
    const { ledger, other } = await setup(t);
    const second = await other();
    const { account } = await ledger.createAccount({ concurrency: 2 });
    const taken = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? second : ledger).acquireSlot(account)));
    t.equal(taken.filter(Boolean).length, 2, 'two of six concurrent takers get a slot');
    t.equal((await ledger.inFlight(account.id)).slotOwners.length, 2);
    t.equal(await second.acquireSlot(account), null, 'at the cap');
    const held = taken.filter((s) => s !== null);
    await held[0]!.release();
    await held[0]!.release();
    const again = await second.acquireSlot(account);
    t.ok(again, 'a freed slot is usable from the other handle');
    t.equal(await ledger.acquireSlot(account), null, 'one release frees one slot');
    await again!.release();
    await held[1]!.release();
    t.same((await ledger.inFlight(account.id)).slotOwners, []);
  });

  t.test('a revocation on one handle applies to the next call on every handle', async (t) => {
    const { ledger, other } = await setup(t);
    const second = await other();
    const { apiKey } = await ledger.createAccount({ label: 'soon revoked' });
    const { apiKey: kept } = await ledger.createAccount({ label: 'kept' });
    t.ok(await second.authenticate(apiKey), 'valid before');
    t.equal(await ledger.revoke(apiKey), 1);
    t.equal(await second.authenticate(apiKey), null, 'revoked on the other handle at once');
    t.equal(await ledger.authenticate(apiKey), null);
    t.ok(await second.authenticate(kept), 'other keys untouched');
    t.same((await ledger.listAccounts()).map((a) => [a.label, a.revoked]).sort(), [
      ['kept', false],
      ['soon revoked', true],
    ]);
  });

  t.test('improve storage: refused past the quota, released once, shared by every handle', async (t) => {
    const { ledger, other } = await setup(t);
    const second = await other();
    const { account } = await ledger.createAccount({});
    const { account: next } = await ledger.createAccount({});
    const a = await ledger.reserveStorage(account, 600, 1000);
    t.equal(a.ok, true);
    t.same(await second.storageUsed(account.id), { bytes: 600, files: 1 });
    t.same(await second.reserveStorage(account, 401, 1000), { ok: false, usedBytes: 600 }, 'seen from the other handle too');
    t.equal((await second.reserveStorage(account, 400, 1000)).ok, true, 'exactly up to the quota');
    t.same(await ledger.storageUsed(account.id), { bytes: 1000, files: 2 });
    t.equal((await ledger.reserveStorage(next, 1000, 1000)).ok, true, 'per account');
    if (a.ok) {
      await a.release();
      await a.release();
    }
    t.same(await ledger.storageUsed(account.id), { bytes: 400, files: 1 }, 'released once');
    await t.rejects(ledger.reserveStorage(account, -1, 1000), RangeError);
  });

  t.test('demo key: made once, on an empty ledger only, even when two handles race', async (t) => {
    const { ledger, other } = await setup(t);
    const second = await other();
    const keys = await Promise.all([ledger.ensureDemoKey(), second.ensureDemoKey(), ledger.ensureDemoKey()]);
    const made = keys.filter((k) => k !== null);
    t.equal(made.length, 1, 'one demo key');
    t.match(made[0], /^ck_[0-9A-Za-z]{32}$/);
    const account = await second.authenticate(made[0]!);
    t.match(account, { label: 'demo' });
    t.match(await ledger.balances(account!.id), { total: 10, freeCalls: 50 });
    t.equal(await ledger.ensureDemoKey(), null);
  });

  t.test('reconcile with every owner alive gives nothing back', async (t) => {
    const { ledger } = await setup(t);
    const { account } = await ledger.createAccount({ subscription: 2 });
    const slot = await ledger.acquireSlot(account);
    const r = await ledger.reserve(account, 'full');
    t.same(await ledger.reconcile(), { holds: 0, credits: 0, freeCalls: 0, slots: 0 });
    t.same(await ledger.inFlight(account.id), { holds: 1, slotOwners: [(await ledger.inFlight(account.id)).slotOwners[0]] });
    await ledger.settle(r, { outputPixels: 1, status: 200 });
    await slot!.release();
    t.equal((await ledger.balances(account.id)).total, 1);
  });
}
