// Child for pg-leases.test.ts: a "node" that opens the PostgreSQL ledger (argv: url, key, lease ms, n),
// takes n slots and n holds, reports them over IPC, and then keeps renewing them until it is killed.

import { openPgLedger } from '../../src/ledger/pg/pg-ledger.js';

const [, , url, key, leaseMs, n] = process.argv;
if (!url || !key || !leaseMs || !n) throw new Error('usage: pg-child <url> <key> <lease ms> <n>');
const ledger = await openPgLedger(url, { leaseMs: Number(leaseMs), nodeId: `child-${process.pid}` });
const account = await ledger.authenticate(key);
if (!account) throw new Error('pg-child: unknown key');
let slots = 0;
let holds = 0;
for (let i = 0; i < Number(n); i++) {
  if (await ledger.acquireSlot(account)) slots++;
  await ledger.reserve(account, i % 2 ? 'preview' : 'full');
  holds++;
}
process.send!({ slots, holds });
// Stay alive (renewing) until killed.
setInterval(() => {}, 1 << 30);
