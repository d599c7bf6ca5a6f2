// keys/usage admin commands: the key is printed alone and only at creation; list never shows keys;
// they work while another ledger handle (a server) has the folder open. Also the first-start demo key.

import t from 'tap';
import { runKeysCommand } from '../../src/cli/keys-command.js';
import { parseSince, runUsageCommand } from '../../src/cli/usage-command.js';
import { openLmdbLedger } from '../../src/ledger/lmdb-ledger.js';

function capture(dataDir: string) {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), dataDir };
  return { out, io, reset: () => Object.assign(out, { stdout: '', stderr: '' }) };
}

t.test('keys create / list / credit / revoke while a server holds the folder open', async (t) => {
  const dir = t.testdir();
  const server = openLmdbLedger(dir);
  t.teardown(() => server.close());
  const { out, io, reset } = capture(dir);

  t.equal(
    await runKeysCommand(['create', '--credits', '5', '--payg', '2', '--free-calls', '3', '--concurrency', '2', '--rate', '100', '--label', 'shop one'], io),
    0,
  );
  t.match(out.stdout, /^ck_[0-9A-Za-z]{32}\n$/, 'the key alone on stdout');
  const key = out.stdout.trim();
  const account = server.authenticate(key);
  t.match(account, { label: 'shop one', concurrency: 2, ratePerMinute: 100 }, 'server sees the new key at once');
  t.match(server.balances(account!.id), { subscription: 5, payg: 2, enterprise: 0, freeCalls: 3 });

  reset();
  t.equal(await runKeysCommand(['create', '--json', '--label', 'j'], io), 0);
  const created = JSON.parse(out.stdout) as { key: string; account: { id: string } };
  t.match(created.key, /^ck_/);

  reset();
  t.equal(await runKeysCommand(['list'], io), 0);
  t.notOk(out.stdout.includes(key.slice(3)) || out.stdout.includes(created.key.slice(3)), 'list never prints keys');
  t.match(out.stdout, account!.id);
  t.match(out.stdout, 'shop one');
  reset();
  t.equal(await runKeysCommand(['list', '--json'], io), 0);
  t.notOk(out.stdout.includes(key.slice(3)));
  t.equal((JSON.parse(out.stdout) as unknown[]).length, 2);

  reset();
  t.equal(await runKeysCommand(['credit', key, '--add', '10', '--payg'], io), 0);
  t.match(server.balances(account!.id), { subscription: 5, payg: 12 });
  t.equal(await runKeysCommand(['credit', account!.id, '--add', '1'], io), 0);
  t.match(server.balances(account!.id), { subscription: 6, payg: 12 });
  t.notOk(out.stdout.includes(key.slice(3)), 'credit does not echo the key');

  reset();
  t.equal(await runKeysCommand(['revoke', key], io), 0);
  t.equal(server.authenticate(key), null, 'revocation visible to the open server');
  t.ok(server.authenticate(created.key), 'other keys untouched');
  t.equal(await runKeysCommand(['revoke', created.account.id], io), 0);
  t.equal(server.authenticate(created.key), null, 'revoke by account id');
  reset();
  t.equal(await runKeysCommand(['list', '--json'], io), 0);
  t.same(
    (JSON.parse(out.stdout) as Array<{ revoked: boolean }>).map((a) => a.revoked),
    [true, true],
  );
});

t.test('keys: errors and exit codes', async (t) => {
  const dir = t.testdir();
  const { out, io, reset } = capture(dir);
  t.equal(await runKeysCommand(['list'], io), 1, 'no ledger yet');
  t.equal(await runKeysCommand(['create', '--credits', 'lots'], io), 2);
  t.match(out.stderr, 'Expected a non-negative integer up to 9007199254740991 for --credits but received lots');
  reset();
  // Rounded by Number(), it used to be refused as "received 9007199254740992" (a number not typed).
  t.equal(await runKeysCommand(['create', '--credits', '9007199254740993'], io), 2);
  t.match(out.stderr, 'but received 9007199254740993');
  t.equal(await runKeysCommand(['create', '--payg', '9007199254740991'], io), 0, 'the largest exact integer is taken');
  t.equal(await runKeysCommand(['create', '--concurrency', '0'], io), 2);
  reset();
  t.equal(await runKeysCommand(['create'], io), 0);
  t.equal(await runKeysCommand(['revoke', 'acct_nope'], io), 1);
  t.equal(await runKeysCommand(['credit', 'acct_nope', '--add', '1'], io), 1);
  t.equal(await runKeysCommand(['credit', out.stdout.trim(), '--add', '0'], io), 2);
  t.equal(await runKeysCommand(['frobnicate'], io), 2);
  t.equal(await runKeysCommand([], io), 2);
});

t.test('usage summarises the log per account', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  const { account } = ledger.createAccount({ label: 'u', subscription: 5, freeCallsPerMonth: 1 });
  await ledger.settle(await ledger.reserve(account, 'preview'), { outputPixels: 250_000, status: 200 });
  await ledger.settle(await ledger.reserve(account, 'full'), { outputPixels: 12_000_000, status: 200 });
  await ledger.settle(await ledger.reserve(account, 'full'), { outputPixels: 0, status: 500 });
  await ledger.refund(await ledger.reserve(account, 'full'));

  const { out, io, reset } = capture(dir);
  t.equal(await runUsageCommand(['--json'], io), 0);
  t.same(JSON.parse(out.stdout).accounts, [
    { accountId: account.id, label: 'u', requests: 3, credits: 2, freeCalls: 1, outputMegapixels: 12.25, statuses: { '200': 2, '500': 1 } },
  ]);
  reset();
  t.equal(await runUsageCommand(['--since', '1'], io), 0);
  t.match(out.stdout, account.id);
  t.match(out.stdout, '200:2 500:1');
  reset();
  t.equal(await runUsageCommand(['--since', '2999-01-01', '--json'], io), 0);
  t.same(JSON.parse(out.stdout).accounts, []);
  t.equal(await runUsageCommand(['--since', 'yesterday-ish'], io), 2);

  t.equal(parseSince('7', 10 * 86_400_000), 3 * 86_400_000);
  t.equal(parseSince('2025-07-01', 0), Date.UTC(2025, 6, 1));
  t.equal(parseSince('nope', 0), null);
});

t.test('ensureDemoKey: once, on an empty folder only', async (t) => {
  const dir = t.testdir();
  const first = openLmdbLedger(dir);
  const key = first.ensureDemoKey();
  t.match(key, /^ck_[0-9A-Za-z]{32}$/);
  t.equal(first.ensureDemoKey(), null, 'second call: nothing');
  await first.close();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  t.equal(ledger.ensureDemoKey(), null, 'second start: nothing');
  const account = ledger.authenticate(key!);
  t.match(account, { label: 'demo' });
  t.match(ledger.balances(account!.id), { total: 10, freeCalls: 50 });

  const other = openLmdbLedger(t.testdir());
  other.createAccount({ label: 'real' });
  t.equal(other.ensureDemoKey(), null, 'a folder with accounts gets no demo key');
  await other.close();
});
