// ledger/storage.ts: improve storage per account, refused past the quota, given back on release (once), shared by every handle on the folder.
import t from 'tap';
import { openLedger } from '../../src/ledger/lmdb-ledger.js';

t.test('reserve, refuse past the quota, release', async (t) => {
  const dir = t.testdir();
  const ledger = openLedger(dir);
  const other = openLedger(dir); // a second handle stands for another server process's view
  t.teardown(async () => {
    await other.close();
    await ledger.close();
  });
  const { account } = ledger.createAccount({});
  const { account: second } = ledger.createAccount({});
  const a = ledger.reserveStorage(account, 600, 1000);
  t.equal(a.ok, true);
  t.same(other.storageUsed(account.id), { bytes: 600, files: 1 });
  t.same(other.reserveStorage(account, 401, 1000), { ok: false, usedBytes: 600 }, 'seen from the other handle too');
  const b = other.reserveStorage(account, 400, 1000);
  t.equal(b.ok, true, 'exactly up to the quota');
  t.same(ledger.storageUsed(account.id), { bytes: 1000, files: 2 });
  t.equal(ledger.reserveStorage(second, 1000, 1000).ok, true, 'per account');
  if (a.ok) {
    a.release();
    a.release();
  }
  t.same(ledger.storageUsed(account.id), { bytes: 400, files: 1 }, 'released once');
  t.throws(() => ledger.reserveStorage(account, -1, 1000), RangeError);
});
