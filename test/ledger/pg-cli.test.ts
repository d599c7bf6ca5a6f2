// `cutout keys` and `cutout usage` against PostgreSQL (--ledger / CUTOUT_LEDGER_URL), and `cutout serve`
// with a ledger URL that is bad or unreachable: a clear error naming the problem, at once, no password.
import t from 'tap';
import { runKeysCommand } from '../../src/cli/keys-command.js';
import { runUsageCommand } from '../../src/cli/usage-command.js';
import { openPgLedger } from '../../src/ledger/pg/pg-ledger.js';
import { cli, freePort, MAIN } from '../helpers/ledger-procs.js';
import { startPostgres } from '../helpers/postgres.js';
import { spawnSync } from 'node:child_process';

const server = await startPostgres(t);

function capture(ledgerUrl?: string) {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), dataDir: t.testdir(), ledgerUrl };
  return { out, io, reset: () => Object.assign(out, { stdout: '', stderr: '' }) };
}

t.test('keys create / list / credit / revoke and usage on a PostgreSQL ledger', async (t) => {
  const url = await server.createDatabase();
  const node = await openPgLedger(url); // a running server's view
  t.teardown(() => node.close());
  const { out, io, reset } = capture();

  t.equal(await runKeysCommand(['create', '--credits', '5', '--payg', '2', '--label', 'shop', '--ledger', url], io), 0, out.stderr);
  const key = out.stdout.trim();
  t.match(key, /^ck_[0-9A-Za-z]{32}$/, 'the key alone on stdout');
  const account = await node.authenticate(key);
  t.match(account, { label: 'shop' }, 'the node sees the new key at once');

  reset();
  t.equal(await runKeysCommand(['credit', key, '--add', '10', '--enterprise', '--ledger', url], io), 0);
  t.match(await node.balances(account!.id), { subscription: 5, payg: 2, enterprise: 10 });
  reset();
  t.equal(await runKeysCommand(['credit', account!.id, '--add', String(Number.MAX_SAFE_INTEGER), '--ledger', url], io), 3, 'refused past 2^53-1');
  t.match(out.stderr, /^cutout keys: refused: Adding 9007199254740991 to subscription would bring the account's total to 9007199254741008 credits/);

  await node.settle(await node.reserve(account!, 'full'), { outputPixels: 1_000_000, status: 200 });
  reset();
  t.equal(await runUsageCommand(['--json'], { ...io, ledgerUrl: url }), 0, 'usage through CUTOUT_LEDGER_URL');
  t.match(JSON.parse(out.stdout).accounts, [{ accountId: account!.id, label: 'shop', requests: 1, credits: 1 }]);

  reset();
  t.equal(await runKeysCommand(['list', '--ledger', url], io), 0);
  t.notOk(out.stdout.includes(key.slice(3)), 'list never prints keys');
  t.match(out.stdout, account!.id);
  reset();
  t.equal(await runKeysCommand(['revoke', key, '--ledger', url], io), 0);
  t.equal(await node.authenticate(key), null, 'revoked for the running node');
  t.equal(await runKeysCommand(['revoke', 'acct_nope', '--ledger', url], io), 1);
});

t.test('bad or unreachable ledger URLs: usage errors (2) and unreachable (1), never a password', async (t) => {
  const { out, io, reset } = capture();
  t.equal(await runKeysCommand(['list', '--ledger', 'mysql://root:pw@db/x'], io), 2);
  t.match(out.stderr, /^cutout keys: Expected a postgres:\/\/ or postgresql:\/\/ URL for --ledger but received 'mysql:\/\/root:\*\*\*@db\/x'/);
  reset();
  t.equal(await runKeysCommand(['list', '--ledger'], io), 2);
  t.match(out.stderr, 'Option --ledger needs a postgres:// URL');
  reset();
  const closed = await freePort();
  t.equal(await runUsageCommand(['--ledger', `postgres://u:topsecret@127.0.0.1:${closed}/x`], io), 1);
  t.match(out.stderr, new RegExp(`^cutout usage: cannot reach the ledger database postgres://u:\\*\\*\\*@127\\.0\\.0\\.1:${closed}/x: `));
  t.notOk(out.stderr.includes('topsecret'));
});

t.test('cutout serve: a bad --ledger is a usage error; an unreachable one fails the start, naming it', async (t) => {
  const bad = spawnSync(process.execPath, [MAIN, 'serve', '--ledger', 'http://db/x'], { encoding: 'utf8', timeout: 60_000 });
  t.equal(bad.status, 2);
  t.match(bad.stderr, /^cutout serve: Expected a postgres:\/\/ or postgresql:\/\/ URL for --ledger but received 'http:\/\/db\/x'/);
  const closed = await freePort();
  const down = await cli(['serve', '--port', '0', '--data', t.testdir(), '--ledger', `postgres://u:hush@127.0.0.1:${closed}/x`], 60_000);
  t.equal(down.code, 1);
  t.match(
    down.stderr,
    new RegExp(`cutout serve: failed to start: cannot reach the ledger database postgres://u:\\*\\*\\*@127\\.0\\.0\\.1:${closed}/x: .*ECONNREFUSED`),
  );
  t.notOk(down.stderr.includes('hush'));
});
