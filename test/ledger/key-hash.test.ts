// Keys: format, hashing, and proof that no key is ever written to disk in plain text.

import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { generateApiKey, hashApiKey } from '../../src/ledger/key-hash.js';
import { randomBase62 } from '../../src/ledger/ids.js';
import { openLmdbLedger } from '../../src/ledger/lmdb-ledger.js';

t.test('key format and hash', async (t) => {
  const key = generateApiKey();
  t.match(key, /^ck_[0-9A-Za-z]{32}$/);
  t.not(generateApiKey(), key);
  t.equal(hashApiKey(key), hashApiKey(key));
  t.match(hashApiKey(key), /^[0-9a-f]{64}$/);
  t.match(randomBase62(100), /^[0-9A-Za-z]{100}$/);
});

t.test('the db files hold the key hash, never the key', async (t) => {
  const dir = t.testdir();
  const ledger = openLmdbLedger(dir);
  const keys = [ledger.createAccount({ label: 'a' }).apiKey, ledger.createAccount({ label: 'b' }).apiKey];
  ledger.revoke(keys[1]!);
  t.ok(ledger.authenticate(keys[0]!));
  await ledger.close();

  const bytes = readdirSync(dir).map((f) => readFileSync(join(dir, f)));
  t.ok(bytes.length > 0);
  for (const key of keys) {
    const body = key.slice(3); // the random part, in case a prefix were stripped
    t.notOk(
      bytes.some((b) => b.includes(body)),
      'key body absent',
    );
    t.notOk(
      bytes.some((b) => b.includes(Buffer.from(body, 'utf16le'))),
      'key body absent as UTF-16',
    );
    t.ok(
      bytes.some((b) => b.includes(hashApiKey(key))),
      'hash present (the scan reads real data)',
    );
  }
});

t.test('authenticate: unknown and revoked keys are null', async (t) => {
  const ledger = openLmdbLedger(t.testdir());
  t.teardown(() => ledger.close());
  const { account, apiKey } = ledger.createAccount({ label: 'x', concurrency: 3, ratePerMinute: 7 });
  t.same(ledger.authenticate(apiKey), { id: account.id, label: 'x', concurrency: 3, ratePerMinute: 7 });
  t.equal(ledger.authenticate(generateApiKey()), null);
  t.equal(ledger.authenticate(''), null);
  t.equal(ledger.revoke(account.id), 1);
  t.equal(ledger.authenticate(apiKey), null);
  t.equal(ledger.revoke(apiKey), 0, 'already revoked');
});
