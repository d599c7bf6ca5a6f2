// The shared ledger suite (ledger-suite.ts) on LMDB: a fresh data folder per test; the second handle is
// another open of the same folder.

import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbBackend } from '../../src/ledger/lmdb-backend.js';
import { ledgerSuite } from './ledger-suite.js';

ledgerSuite(t, async (t, now) => {
  // Not t.testdir(): its ".test.js-…" suffix reads as a file extension to LMDB.
  const dir = mkdtempSync(join(tmpdir(), 'cutout-suite-'));
  const opened = [openLmdbBackend(dir, now ? { now } : {})];
  t.teardown(async () => {
    for (const l of opened.reverse()) await l.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    ledger: opened[0]!,
    async other() {
      const l = openLmdbBackend(dir, now ? { now } : {});
      opened.push(l);
      return l;
    },
  };
});
