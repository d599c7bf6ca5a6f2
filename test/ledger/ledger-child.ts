// Child process for the cross-process tests: opens the ledger folder given as argv[2] and obeys IPC
// messages from the parent. With a command in argv[3] it runs that once and exits (used with execFileSync).

import { openLmdbLedger } from '../../src/ledger/lmdb-ledger.js';
import type { HeldSlot } from '../../src/ledger/slots.js';

export type ChildRequest =
  | { op: 'race'; key: string; attempts: number }
  | { op: 'hold'; key: string }
  | { op: 'slots'; key: string; n: number }
  | { op: 'release-one' }
  | { op: 'auth'; key: string }
  | { op: 'exit' };

export type ChildReply = { op: string; [k: string]: unknown };

const [, , dir, command, arg] = process.argv;
if (!dir) throw new Error('usage: ledger-child <dir> [revoke <key>]');
const ledger = openLmdbLedger(dir);

if (command === 'revoke' && arg) {
  ledger.revoke(arg);
  await ledger.close();
} else {
  const slots: HeldSlot[] = [];
  const send = (m: ChildReply): void => void process.send!(m);
  const login = (key: string) => {
    const account = ledger.authenticate(key);
    if (!account) throw new Error('child: unknown key');
    return account;
  };

  process.on('message', async (m: ChildRequest) => {
    switch (m.op) {
      case 'race': {
        const account = login(m.key);
        let ok = 0;
        let short = 0;
        for (let i = 0; i < m.attempts; i++) {
          try {
            await ledger.reserve(account, 'full');
            ok++;
          } catch {
            short++;
          }
        }
        send({ op: 'race', ok, short });
        break;
      }
      case 'hold': {
        const account = login(m.key);
        const slot = ledger.acquireSlot(account);
        if (slot) slots.push(slot);
        const reservation = await ledger.reserve(account, 'full');
        send({ op: 'hold', slot: slot !== null, reservation });
        break;
      }
      case 'slots': {
        const account = login(m.key);
        for (let i = 0; i < m.n; i++) {
          const slot = ledger.acquireSlot(account);
          if (slot) slots.push(slot);
        }
        send({ op: 'slots', held: slots.length });
        break;
      }
      case 'release-one':
        slots.pop()?.release();
        send({ op: 'release-one', held: slots.length });
        break;
      case 'auth':
        send({ op: 'auth', account: ledger.authenticate(m.key) });
        break;
      case 'exit':
        await ledger.close();
        process.disconnect();
        break;
    }
  });
  send({ op: 'ready' });
}
