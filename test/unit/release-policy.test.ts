// The staged photo worker's release: after every task unless work waits, then once the garbage left
// behind reaches the bound; never kept past a task after which nothing waited.
import t from 'tap';
import { DEFERRED_GARBAGE_BYTES, finishGarbageBytes, ReleasePolicy } from '../../src/worker/release-policy.js';

const MB = 1024 * 1024;

t.test('nothing waiting: release after every task', async (t) => {
  const p = new ReleasePolicy(64 * MB);
  for (let i = 0; i < 5; i++) t.equal(p.afterTask(16 * MB, false), true, `task ${i}`);
  t.equal(p.deferred, 0);
});

t.test('work waiting: release once the garbage reaches the bound', async (t) => {
  const p = new ReleasePolicy(64 * MB);
  t.same([1, 2, 3].map(() => p.afterTask(16 * MB, true)), [false, false, false], 'three 16 MB tasks put off');
  t.equal(p.deferred, 48 * MB);
  t.equal(p.afterTask(16 * MB, true), true, 'the fourth reaches 64 MB: release');
  t.equal(p.deferred, 0);
  t.equal(p.afterTask(100 * MB, true), true, 'one task over the bound alone: at once');
});

t.test('the queue empties: the next task releases whatever was put off', async (t) => {
  const p = new ReleasePolicy(64 * MB);
  p.afterTask(20 * MB, true);
  p.afterTask(20 * MB, true);
  t.equal(p.afterTask(1 * MB, false), true);
  t.equal(p.deferred, 0);
});

t.test('the pool goes idle: whatever was put off is released once', async (t) => {
  const p = new ReleasePolicy(64 * MB);
  t.equal(p.whenIdle(), false, 'nothing put off: nothing to do');
  p.afterTask(20 * MB, true);
  t.equal(p.whenIdle(), true, 'garbage put off: release');
  t.equal(p.deferred, 0);
  t.equal(p.whenIdle(), false, 'and only once');
});

t.test('the estimate of a finished photo and the default bound', async (t) => {
  t.equal(finishGarbageBytes({ width: 1333, height: 750 }, 4 * MB), 1333 * 750 * 8 + 4 * MB);
  t.equal(DEFERRED_GARBAGE_BYTES, 64 * MB);
  const p = new ReleasePolicy();
  const oneMp = finishGarbageBytes({ width: 1333, height: 750 }, 4 * MB);
  let releases = 0;
  for (let i = 0; i < 40; i++) if (p.afterTask(oneMp, true)) releases++;
  t.ok(releases >= 6 && releases <= 7, `40 queued 1 MP photos (12 MB each): ${releases} releases (about every sixth)`);
});
