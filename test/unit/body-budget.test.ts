// http/body-budget.ts: the shares of the bodies-in-memory budget, the order refusals are checked in,
// and exact accounting: every take gives back what it took, once, whatever mix of owners and downloads.
import t from 'tap';
import { BodyBudget, isRefusal, minUploadRate, UPLOAD_MAX_HOLD_S, UPLOAD_MIN_BYTES_PER_S, type BodyHold, type BodyOwner } from '../../src/http/body-budget.js';

const MB = 1024 * 1024;

function held(x: ReturnType<BodyBudget['take']>): BodyHold {
  if (isRefusal(x)) throw new Error(`refused: ${JSON.stringify(x)}`);
  return x;
}

t.test('the shares: sandbox B/8, an address half of it, a key its cap × M within half of the rest, never under M', async (t) => {
  const b = new BodyBudget(256 * MB, 30 * MB);
  t.equal(b.sandboxBytes, 32 * MB);
  t.equal(b.addressBytes, 16 * MB);
  t.equal(b.shareOf({ address: '203.0.113.9' }), 16 * MB);
  t.equal(b.shareOf({ account: 'a', concurrency: 1 }), 30 * MB);
  t.equal(b.shareOf({ account: 'a', concurrency: 3 }), 90 * MB);
  t.equal(b.shareOf({ account: 'a', concurrency: 50 }), 112 * MB, 'half of what the sandbox leaves');
  t.equal(b.largestBody({ address: '203.0.113.9' }), 16 * MB, 'a sandbox body: its address share');
  t.equal(b.largestBody({ account: 'a', concurrency: 1 }), 30 * MB);
  t.equal(b.largestBody(undefined), 30 * MB);
  // The smallest budget config allows (two largest bodies): a key still fits one largest body.
  const small = new BodyBudget(60 * MB, 30 * MB);
  t.equal(small.shareOf({ account: 'a', concurrency: 8 }), 30 * MB);
  t.equal(small.sandboxBytes, Math.floor((60 * MB) / 8));
  t.equal(small.largestBody({ address: '::1' }), Math.floor((60 * MB) / 16));
});

t.test('refusals: the whole budget first, then the sandbox, then the owner; nothing taken when refused', async (t) => {
  const b = new BodyBudget(160, 40); // sandbox 20, address 10; a key's share 40 × cap within 70
  const key: BodyOwner = { account: 'k', concurrency: 1 };
  const k1 = held(b.take(40, key));
  t.same(b.take(1, key), { refused: 'key', heldBytes: 40, limitBytes: 40 });
  const a1 = held(b.take(10, { address: '203.0.113.1' }));
  t.same(b.take(1, { address: '203.0.113.1' }), { refused: 'address', heldBytes: 10, limitBytes: 10 });
  held(b.take(10, { address: '203.0.113.2' }));
  t.same(b.take(1, { address: '203.0.113.3' }), { refused: 'sandbox', heldBytes: 20, limitBytes: 20 });
  held(b.take(70, { account: 'other', concurrency: 4 }));
  t.same(b.take(1, { account: 'other', concurrency: 4 }), { refused: 'key', heldBytes: 70, limitBytes: 70 }, 'a large cap: half of what the sandbox leaves');
  held(b.take(30, { account: 'third', concurrency: 4 }));
  t.equal(b.inUse, 160);
  t.same(b.take(1, { account: 'third', concurrency: 4 }), { refused: 'budget', heldBytes: 160, limitBytes: 160 }, 'a full budget is a 503 for anyone');
  t.same(b.take(1, key), { refused: 'budget', heldBytes: 160, limitBytes: 160 }, 'the budget is checked before the share');
  t.equal(b.inUse, 160, 'refusals took nothing');
  k1.release();
  a1.release();
  t.equal(b.inUse, 110);
  t.equal(b.sandboxInUse, 10);
  t.equal(b.heldBy(key), 0);
  t.equal(b.heldBy({ address: '203.0.113.1' }), 0);
  t.equal(b.sandboxInUse, 10);
});

t.test('an IPv6 /64 is one address: its hosts share one part of the sandbox', async (t) => {
  const b = new BodyBudget(160, 40);
  const h = held(b.take(6, { address: '2001:db8:1:2::7' }));
  t.same(b.take(6, { address: '2001:db8:1:2:ffff::1' }), { refused: 'address', heldBytes: 6, limitBytes: 10 });
  t.equal(b.heldBy({ address: '2001:db8:1:2:aaaa::' }), 6);
  held(b.take(6, { address: '2001:db8:1:3::7' })); // the next /64 is another address
  h.release();
  t.equal(b.heldBy({ address: '2001:db8:1:2::7' }), 0);
});

t.test('accounting is exact: releases are idempotent, downloads count in the total only, every mix comes back to 0', async (t) => {
  const b = new BodyBudget(10_000, 1_000);
  const h = held(b.take(500, { account: 'k', concurrency: 2 }));
  h.release();
  h.release();
  t.equal(b.inUse, 0, 'a second release gives nothing back');
  t.equal(b.heldBy({ account: 'k', concurrency: 2 }), 0);

  t.ok(b.add(9_000), 'a download');
  t.equal(b.heldBy({ account: 'k', concurrency: 2 }), 0, 'not in any share');
  t.same(b.take(1_001, undefined), { refused: 'budget', heldBytes: 9_000, limitBytes: 10_000 });
  t.notOk(b.add(1_001), 'a download over the budget is refused, nothing counted');
  b.remove(9_000);
  t.equal(b.inUse, 0);

  // A seeded mix of owners, takes, refusals and releases in any order.
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const owners: Array<BodyOwner | undefined> = [
    undefined,
    { account: 'a', concurrency: 1 },
    { account: 'b', concurrency: 3 },
    { address: '198.51.100.1' },
    { address: '2001:db8::1' },
  ];
  const holds: BodyHold[] = [];
  let expected = 0;
  for (let i = 0; i < 2_000; i++) {
    if (holds.length > 0 && rand(3) === 0) {
      const [gone] = holds.splice(rand(holds.length), 1);
      gone!.release();
      expected -= gone!.bytes;
      gone!.release();
    } else {
      const x = b.take(1 + rand(800), owners[rand(owners.length)]);
      if (!isRefusal(x)) {
        holds.push(x);
        expected += x.bytes;
      }
    }
    if (b.inUse !== expected || b.inUse > b.limitBytes || b.sandboxInUse > b.sandboxBytes) {
      t.fail(`step ${i}: in use ${b.inUse}, expected ${expected}, sandbox ${b.sandboxInUse}`);
      return;
    }
  }
  for (const h of holds) h.release();
  t.equal(b.inUse, 0);
  t.equal(b.sandboxInUse, 0);
  for (const o of owners) if (o) t.equal(b.heldBy(o), 0);
});

t.test('the minimum upload rate: 16 kB/s, or what the body holds over 120 s when more', async (t) => {
  t.equal(minUploadRate(0), UPLOAD_MIN_BYTES_PER_S);
  t.equal(minUploadRate(100_000), UPLOAD_MIN_BYTES_PER_S, 'a small body: the floor');
  t.equal(minUploadRate(30 * MB), (30 * MB) / UPLOAD_MAX_HOLD_S, '30 MB: 256 kB/s, so at most 2 minutes held');
  t.equal(minUploadRate(UPLOAD_MIN_BYTES_PER_S * UPLOAD_MAX_HOLD_S + 1), UPLOAD_MIN_BYTES_PER_S + 1);
});
