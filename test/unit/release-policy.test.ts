// The staged photo worker's release: put off until the garbage left behind reaches the bound, or
// until the pool goes idle (then once, and only when something was put off).
import t from 'tap';
import { DEFERRED_GARBAGE_BYTES, finishGarbageBytes, ReleasePolicy } from '../../src/worker/release-policy.js';

const MB = 1024 * 1024;

t.test('release once the garbage reaches the bound', async (t) => {
  const p = new ReleasePolicy(64 * MB);
  t.same(
    [1, 2, 3].map(() => p.afterTask(16 * MB)),
    [false, false, false],
    'three 16 MB tasks put off',
  );
  t.equal(p.deferred, 48 * MB);
  t.equal(p.afterTask(16 * MB), true, 'the fourth reaches 64 MB: release');
  t.equal(p.deferred, 0);
  t.equal(p.afterTask(100 * MB), true, 'one task over the bound alone: at once');
  t.equal(p.deferred, 0);
  t.equal(p.afterTask(-5), false, 'a negative estimate counts as nothing');
  t.equal(p.deferred, 0);
});

t.test('the pool goes idle: whatever was put off is released once', async (t) => {
  const p = new ReleasePolicy(64 * MB);
  t.equal(p.whenIdle(), false, 'nothing put off: nothing to do');
  p.afterTask(20 * MB);
  t.equal(p.whenIdle(), true, 'garbage put off: release');
  t.equal(p.deferred, 0);
  t.equal(p.whenIdle(), false, 'and only once');
  p.afterTask(20 * MB);
  t.equal(p.afterTask(44 * MB), true, 'the count starts again from nothing after an idle release');
});

t.test('the estimate of a finished photo and the default bound', async (t) => {
  t.equal(finishGarbageBytes({ width: 1333, height: 750 }, 4 * MB), 1333 * 750 * 8 + 4 * MB);
  t.equal(DEFERRED_GARBAGE_BYTES, 64 * MB);
  const p = new ReleasePolicy();
  const oneMp = finishGarbageBytes({ width: 1333, height: 750 }, 4 * MB);
  let releases = 0;
  for (let i = 0; i < 40; i++) if (p.afterTask(oneMp)) releases++;
  t.ok(releases >= 6 && releases <= 7, `40 1 MP photos in a row (12 MB each): ${releases} releases (about every sixth)`);
  const twelveMp = finishGarbageBytes({ width: 4620, height: 2598 }, 4 * MB);
  t.equal(new ReleasePolicy().afterTask(twelveMp), true, 'a 12 MP photo (~96 MB) is over the bound alone: released at once');
});
