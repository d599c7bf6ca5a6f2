// Give-backs a full disk refused are kept and written once there is room: in order, each once, and
// anything that is not the disk is thrown to the caller.
import t from 'tap';
import { giveBacks } from '../../src/ledger/give-backs.js';
import { DiskFullError } from '../../src/ledger/disk-room.js';

t.test('refused for the disk: kept, retried in order until written, each once', async (t) => {
  const owed = giveBacks();
  t.teardown(() => owed.stop());
  let full = true;
  const written: string[] = [];
  const giveBack = (name: string) => () => {
    if (full) throw new DiskFullError('No space left on device');
    written.push(name);
  };
  owed.run(giveBack('refund'));
  owed.run(giveBack('slot'));
  t.equal(owed.owed, 2, 'both kept');
  owed.retry();
  t.same(written, [], 'still full: nothing written');
  t.equal(owed.owed, 2);
  full = false;
  owed.retry();
  t.same(written, ['refund', 'slot'], 'written in the order they were refused');
  t.equal(owed.owed, 0);
  owed.retry();
  t.same(written, ['refund', 'slot'], 'each once');
  owed.run(giveBack('release'));
  t.same(written, ['refund', 'slot', 'release'], 'with room: written at once');
});

t.test('anything else is not the disk: thrown, not kept', async (t) => {
  const owed = giveBacks();
  t.teardown(() => owed.stop());
  t.throws(
    () =>
      owed.run(() => {
        throw new TypeError('a bug');
      }),
    { name: 'TypeError' },
  );
  t.equal(owed.owed, 0);
});

t.test('retried by the timer too, without a caller', async (t) => {
  const owed = giveBacks();
  t.teardown(() => owed.stop());
  let tries = 0;
  const done = new Promise<void>((resolve) =>
    owed.run(() => {
      tries++;
      if (tries < 3) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      resolve();
    }),
  );
  // The retry timer does not hold a process open (unref): hold this one open while it works.
  const alive = setInterval(() => {}, 1000);
  await done;
  clearInterval(alive);
  t.equal(tries, 3, 'refused twice, written on the third try');
  t.equal(owed.owed, 0);
});
