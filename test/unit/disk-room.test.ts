// The room the LMDB ledger keeps on its disk (src/ledger/disk-room.ts), on an ordinary folder: topped up
// to 2 MiB past the data, and after a commit that failed for the disk, every write refused until a
// top-up succeeds again. (The full disk itself: test/integration/ledger-disk-full.test.ts.)
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { diskRoom, ROOM_TARGET } from '../../src/ledger/disk-room.js';

t.test('keeps 2 MiB allocated past the data, written as zeros after the file end only', async (t) => {
  const file = path.join(t.testdir(), 'data.mdb');
  fs.writeFileSync(file, Buffer.alloc(8192, 7));
  let used = 8192;
  const room = diskRoom(file, () => used);
  t.teardown(() => room.close());
  room.ensure('take');
  t.equal(fs.statSync(file).size, 8192 + ROOM_TARGET, 'topped up');
  const bytes = fs.readFileSync(file);
  t.equal(
    bytes.subarray(0, 8192).every((b) => b === 7),
    true,
    "LMDB's pages untouched",
  );
  t.equal(
    bytes.subarray(8192).every((b) => b === 0),
    true,
    'zeros past them',
  );
  used += ROOM_TARGET / 8; // LMDB grew into the room: still over three quarters, no top-up
  room.ensure('take');
  t.equal(fs.statSync(file).size, 8192 + ROOM_TARGET);
  used += ROOM_TARGET / 4; // now under: topped up again
  room.ensure('give');
  t.equal(fs.statSync(file).size, used + ROOM_TARGET);
  t.equal(room.short, false);
});

t.test('after a commit failed for the disk: refused until a top-up succeeds (tried at most once a second)', async (t) => {
  const file = path.join(t.testdir(), 'data.mdb');
  fs.writeFileSync(file, Buffer.alloc(8192));
  let clock = 1_000_000;
  const room = diskRoom(file, () => 8192, { now: () => clock });
  t.teardown(() => room.close());
  room.ensure('take');
  const before = fs.statSync(file).size;
  room.commitFailed();
  t.throws(() => room.ensure('give'), { code: 'ENOSPC', message: /last commit failed/ }, 'refused at once, even a give-back');
  t.throws(() => room.ensure('take'), { code: 'ENOSPC' });
  t.equal(fs.statSync(file).size, before, 'no top-up tried within the second');
  clock += 1000;
  room.ensure('take');
  t.ok(fs.statSync(file).size > before, 'the next try added room, which proves the disk takes writes again');
  t.equal(room.short, false);
});
