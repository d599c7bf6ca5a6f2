// --durability periodic|fsync on serve (config) and keys reaches openLedger; bad values are usage errors.
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { runKeysCommand } from '../../src/cli/keys-command.js';
import { openLmdbLedger } from '../../src/ledger/lmdb-ledger.js';
import { openLedgerDb } from '../../src/ledger/db.js';
import { lmdbBackend } from '../../src/ledger/lmdb-backend.js';

function capture(dataDir: string) {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), dataDir };
  return { out, io };
}

t.test('serve: --durability and CUTOUT_DURABILITY (flag wins), default periodic', async (t) => {
  t.equal(loadConfig([], {}).durability, 'periodic');
  t.equal(loadConfig(['--durability', 'fsync'], {}).durability, 'fsync');
  t.equal(loadConfig([], { CUTOUT_DURABILITY: 'fsync' }).durability, 'fsync');
  t.equal(loadConfig(['--durability=periodic'], { CUTOUT_DURABILITY: 'fsync' }).durability, 'periodic');
  t.throws(() => loadConfig(['--durability', 'sometimes'], {}), {
    name: 'ConfigError',
    message: "Expected periodic or fsync for --durability but received 'sometimes'",
  });
});

t.test('openLedger records what it opened with; relaxed is the old name of periodic', async (t) => {
  for (const [asked, got] of [
    [undefined, 'periodic'],
    ['periodic', 'periodic'],
    ['relaxed', 'periodic'],
    ['fsync', 'fsync'],
  ] as const) {
    const ledger = openLmdbLedger(t.testdir(), asked ? { durability: asked } : {});
    t.equal(ledger.durability, got, String(asked));
    await ledger.close();
  }
});

t.test('keys: --durability reaches the ledger it opens', async (t) => {
  const dir = t.testdir();
  // lmdb-js shares one env per folder in a process and refuses noSync on one opened durable: a keys
  // command opening it 'periodic' in this process shows the flag got through.
  const server = openLmdbLedger(dir, { durability: 'fsync' });
  t.teardown(() => server.close());
  const { account } = server.createAccount({ subscription: 1 });
  const { out, io } = capture(dir);
  t.equal(await runKeysCommand(['credit', account.id, '--add', '2', '--durability', 'fsync'], io), 0, out.stderr);
  t.equal(server.balances(account.id).subscription, 3);
  await t.rejects(runKeysCommand(['credit', account.id, '--add', '2', '--durability', 'periodic'], io), /already open in this process with durability fsync/);
  t.equal(server.balances(account.id).subscription, 3, 'nothing written by the refused open');
});

t.test('keys: a bad --durability is a usage error (exit 2) and opens nothing', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  const { account } = ledger.createAccount({ subscription: 1 });
  await ledger.close();
  const { out, io } = capture(dir);
  t.equal(await runKeysCommand(['credit', account.id, '--add', '1', '--durability', 'always'], io), 2);
  t.match(out.stderr, "cutout keys: Expected periodic or fsync for durability but received 'always'");
  t.equal(await runKeysCommand(['list', '--durability'], io), 2);
  t.match(out.stderr, 'Option --durability needs a value');
});

t.test('periodic: flush is a group commit (callers during a sync share the next one, which starts after them)', async (t) => {
  const db = openLedgerDb(t.testdir(), { durability: 'periodic', flushIntervalMs: 3_600_000 });
  t.teardown(() => db.close());
  // Count mdb_env_sync calls and hold each until released, to see which callers share which sync.
  const root = db.root as unknown as { sync(cb: (err?: Error) => void): void };
  const realSync = root.sync.bind(root);
  const pending: Array<() => void> = [];
  let started = 0;
  root.sync = (cb) => {
    started++;
    pending.push(() => realSync(cb));
  };
  const settled: string[] = [];
  const first = db.flush().then(() => settled.push('first'));
  const during = Array.from({ length: 20 }, (_, i) => db.flush().then(() => settled.push(`during${i}`)));
  await new Promise((r) => setImmediate(r));
  t.equal(started, 1, 'one sync runs; the 20 callers during it wait');
  pending.shift()!();
  await first;
  t.same(settled, ['first'], 'the callers during the first sync are not answered by it');
  await new Promise((r) => setImmediate(r));
  t.equal(started, 2, 'one more sync for all 20');
  pending.shift()!();
  await Promise.all(during);
  t.equal(settled.length, 21);
  t.equal(started, 2, 'two syncs for 21 callers');
  root.sync = realSync;
});

t.test('periodic: a settle whose flush fails is undone, so the refund gives the credit back (no charge without its result)', async (t) => {
  const store = openLmdbLedger(t.testdir(), { durability: 'periodic', flushIntervalMs: 3_600_000 });
  t.teardown(() => store.close());
  const ledger = lmdbBackend(store);
  const { account, apiKey } = store.createAccount({ subscription: 5, freeCallsPerMonth: 0 });
  const view = (await ledger.authenticate(apiKey))!;
  const reservation = await ledger.reserve(view, 'preview');
  t.equal(store.balances(account.id).subscription, 4, 'held');
  const realFlush = store.flush;
  store.flush = () => Promise.reject(new Error('EIO: i/o error, fsync'));
  await t.rejects(ledger.settle(reservation, { outputPixels: 100, status: 200 }), { code: 'ledger_unavailable', message: /cannot flush: EIO/ });
  store.flush = realFlush;
  t.equal(store.balances(account.id).subscription, 4, 'still held, not charged for good');
  await ledger.refund(reservation);
  t.equal(store.balances(account.id).subscription, 5, 'the refund gave it back');
  t.equal(store.summarizeUsage(0).length, 0, 'no usage entry');

  // The same settle with a working flush charges once.
  const again = await ledger.reserve(view, 'preview');
  await ledger.settle(again, { outputPixels: 100, status: 200 });
  await ledger.refund(again); // the request's finally: nothing left to refund
  t.equal(store.balances(account.id).subscription, 4, 'charged once');
  t.equal(store.summarizeUsage(0)[0]?.requests, 1, 'one usage entry');
});

t.test('a disk that refuses a write (full, failing) is ledger_unavailable before any work, never a 500', async (t) => {
  const store = openLmdbLedger(t.testdir());
  t.teardown(() => store.close());
  const ledger = lmdbBackend(store);
  const { apiKey, account } = store.createAccount({ subscription: 5, freeCallsPerMonth: 0, concurrency: 2 });
  const view = (await ledger.authenticate(apiKey))!;
  const failures: Array<[string, Error & { code?: string }]> = [
    ['ENOSPC', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })],
    ['EIO', Object.assign(new Error('Input/output error'), { code: 'EIO' })],
    ['MDB_MAP_FULL', new Error('MDB_MAP_FULL: Environment mapsize limit reached')],
  ];
  for (const [name, failure] of failures) {
    const realReserve = store.reserve;
    const realAcquire = store.acquireSlot;
    store.reserve = () => {
      throw failure;
    };
    store.acquireSlot = () => {
      throw failure;
    };
    await t.rejects(ledger.reserve(view, 'preview'), { code: 'ledger_unavailable', message: /cannot write/ }, `reserve, ${name}`);
    await t.rejects(ledger.acquireSlot(view), { code: 'ledger_unavailable' }, `slot, ${name}`);
    store.reserve = realReserve;
    store.acquireSlot = realAcquire;
  }
  // Anything else is not the disk: it stays what it is (a 500 with the operator's log line).
  store.reserve = () => {
    throw new TypeError('a bug');
  };
  await t.rejects(ledger.reserve(view, 'preview'), { name: 'TypeError' });
  t.equal(store.balances(account.id).subscription, 5, 'nothing held by any of them');
});
