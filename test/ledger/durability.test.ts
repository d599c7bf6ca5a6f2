// --durability periodic|fsync on serve (config) and keys reaches openLedger; bad values are usage errors.
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.js';
import { runKeysCommand } from '../../src/cli/keys-command.js';
import { openLmdbLedger } from '../../src/ledger/lmdb-ledger.js';

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
  t.throws(() => loadConfig(['--durability', 'sometimes'], {}), { name: 'ConfigError', message: "Expected periodic or fsync for --durability but received 'sometimes'" });
});

t.test('openLedger records what it opened with; relaxed is the old name of periodic', async (t) => {
  for (const [asked, got] of [[undefined, 'periodic'], ['periodic', 'periodic'], ['relaxed', 'periodic'], ['fsync', 'fsync']] as const) {
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
