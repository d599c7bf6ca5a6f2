// Per-minute rate window with an injected clock: charge, refuse with Retry-After, reset at the boundary.

import t from 'tap';
import { openLedger } from '../../src/ledger/lmdb-ledger.js';

t.test('fixed 60 s window aligned to the minute', async (t) => {
  const clock = { ms: 1_700_000_100_000 };
  const windowStart = Math.floor(clock.ms / 1000 / 60) * 60;
  clock.ms = (windowStart + 5) * 1000;
  const ledger = openLedger(t.testdir(), { now: () => clock.ms });
  t.teardown(() => ledger.close());
  const { account } = ledger.createAccount({ ratePerMinute: 10 });

  t.same(ledger.peekRate(account), { limit: 10, remaining: 10, reset: windowStart + 60 });
  t.same(ledger.takeRate(account, 6), { ok: true, limit: 10, remaining: 4, reset: windowStart + 60 });
  t.same(ledger.peekRate(account), { limit: 10, remaining: 4, reset: windowStart + 60 }, 'peek does not charge');

  t.same(ledger.takeRate(account, 5), { ok: false, retryAfter: 55, limit: 10, remaining: 4, reset: windowStart + 60 });
  t.same(ledger.takeRate(account, 4), { ok: true, limit: 10, remaining: 0, reset: windowStart + 60 }, 'a refusal costs nothing');
  t.same(ledger.takeRate(account, 0), { ok: true, limit: 10, remaining: 0, reset: windowStart + 60 });

  clock.ms = (windowStart + 59) * 1000 + 900;
  const late = ledger.takeRate(account, 1);
  t.equal(late.ok, false);
  t.equal(!late.ok && late.retryAfter, 1, 'Retry-After is at least 1');

  clock.ms = (windowStart + 60) * 1000;
  t.same(ledger.takeRate(account, 3), { ok: true, limit: 10, remaining: 7, reset: windowStart + 120 }, 'next window');
});

t.test('fractional units round up; the limit is per account', async (t) => {
  const clock = { ms: 60_000 * 1000 };
  const ledger = openLedger(t.testdir(), { now: () => clock.ms });
  t.teardown(() => ledger.close());
  const a = ledger.createAccount({ ratePerMinute: 2 }).account;
  const b = ledger.createAccount({ ratePerMinute: 2 }).account;
  t.match(ledger.takeRate(a, 1.2), { ok: true, remaining: 0 });
  t.match(ledger.takeRate(a, 1), { ok: false });
  t.match(ledger.takeRate(b, 2), { ok: true, remaining: 0 });
});
