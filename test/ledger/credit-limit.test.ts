// keys credit --add refuses a balance past Number.MAX_SAFE_INTEGER (exit 3, nothing written) instead of rounding it.
import t from 'tap';
import { runKeysCommand } from '../../src/cli/keys-command.js';
import { openLmdbLedger } from '../../src/ledger/lmdb-ledger.js';

function capture(dataDir: string) {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), dataDir };
  return { out, io };
}

const MAX = String(Number.MAX_SAFE_INTEGER); // 9007199254740991

t.test('two --add 9007199254740991: the second is refused with exit 3 and the balance is exact', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  t.teardown(() => ledger.close());
  const { account } = ledger.createAccount({});
  const { out, io } = capture(dir);
  t.equal(await runKeysCommand(['credit', account.id, '--add', MAX], io), 0);
  t.equal(ledger.balances(account.id).total, Number.MAX_SAFE_INTEGER);
  t.equal(await runKeysCommand(['credit', account.id, '--add', MAX], io), 3);
  t.match(
    out.stderr,
    `cutout keys: refused: Adding ${MAX} to subscription would bring the account's total to 18014398509481982 credits, past the largest exact balance ${MAX}`,
  );
  t.same(
    ledger.balances(account.id),
    { subscription: Number.MAX_SAFE_INTEGER, payg: 0, enterprise: 0, total: Number.MAX_SAFE_INTEGER, freeCalls: 50 },
    'unchanged',
  );
  // The limit is on the total: another balance cannot take it past either.
  t.equal(await runKeysCommand(['credit', account.id, '--add', '1', '--payg'], io), 3);
  t.equal(ledger.balances(account.id).payg, 0);
});

t.test('the ledger refuses it too (one check for credit and create)', async (t) => {
  const ledger = openLmdbLedger(t.testdir());
  t.teardown(() => ledger.close());
  const { account } = ledger.createAccount({ subscription: Number.MAX_SAFE_INTEGER - 1 });
  t.same(ledger.addCredits(account.id, 1, 'enterprise')?.total, Number.MAX_SAFE_INTEGER, 'up to the limit is fine');
  t.throws(() => ledger.addCredits(account.id, 1, 'subscription'), { code: 'balance_limit' });
  t.throws(() => ledger.createAccount({ subscription: Number.MAX_SAFE_INTEGER, payg: 1 }), { code: 'balance_limit' });
  t.equal(ledger.listAccounts().length, 1, 'no account created');
});
