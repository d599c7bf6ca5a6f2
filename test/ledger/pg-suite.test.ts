// The shared ledger suite (ledger-suite.ts) on PostgreSQL: one server for the file, a fresh database per
// test; the second handle is another pool with its own node id, standing for another node.

import t from 'tap';
import { openPgLedger } from '../../src/ledger/pg/pg-ledger.js';
import type { LedgerBackend } from '../../src/ledger/ledger.js';
import { startPostgres } from '../helpers/postgres.js';
import { ledgerSuite } from './ledger-suite.js';

const server = await startPostgres(t);

ledgerSuite(t, async (t, now) => {
  const url = await server.createDatabase();
  const opened: LedgerBackend[] = [];
  const open = async () => {
    const l = await openPgLedger(url, { now, onError: (err) => t.fail(`background ledger error: ${err.message}`) });
    opened.push(l);
    return l;
  };
  t.teardown(async () => {
    for (const l of opened) await l.close();
  });
  return { ledger: await open(), other: open };
});
