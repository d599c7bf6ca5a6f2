// The ledger through a full disk, as the server uses it (the async LMDB backend), in its own process so a
// test can run it under valgrind. argv: a folder on an empty small tmpfs. Prints one JSON line (FullDiskRun).

import fs from 'node:fs';
import path from 'node:path';
import { openLmdbBackend, isDiskFailure } from '../../src/ledger/lmdb-backend.js';
import { fillDisk } from '../helpers/tmpfs.js';

export interface FullDiskRun {
  /** Accounts added after the fill before the ledger refused one (its room used up). */
  grown: number;
  refused: { reserve: string; slot: string; account: string };
  charged: number;
  afterFull: { total: number; holds: number; slots: number };
  recovered: { total: number; holds: number; slots: number; charged: number };
}

const mnt = process.argv[2]!;
const dir = path.join(mnt, 'data');
const filler = path.join(mnt, 'filler');
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? 'none',
  );

const ledger = openLmdbBackend(dir);
const { account, apiKey } = await ledger.createAccount({ subscription: 100, freeCallsPerMonth: 0, concurrency: 4 });
const view = (await ledger.authenticate(apiKey))!;
const holds = [await ledger.reserve(view, 'preview'), await ledger.reserve(view, 'full'), await ledger.reserve(view, 'preview')];
const slot = (await ledger.acquireSlot(view))!;

fillDisk(filler);
// The ledger keeps growing (long labels make it quick) until its room on the disk is used up.
let grown = 0;
let accountRefused = 'ok';
for (; grown < 10_000; grown++) {
  try {
    await ledger.createAccount({ label: 'x'.repeat(8000) });
  } catch (err) {
    if (!isDiskFailure(err)) throw err;
    accountRefused = (err as { code: string }).code;
    break;
  }
}
const refused = { reserve: await codeOf(ledger.reserve(view, 'preview')), slot: await codeOf(ledger.acquireSlot(view)), account: accountRefused };
// What the requests in flight still do on the full disk: one settles, the others are refunded, the slot goes back.
await ledger.settle(holds[0]!, { outputPixels: 1, status: 200 });
await ledger.refund(holds[1]!);
await ledger.refund(holds[2]!);
await slot.release();
const charged = holds[0]!.credits;
const inFlight = async () => {
  const f = await ledger.inFlight(account.id);
  return { total: (await ledger.balances(account.id)).total, holds: f.holds, slots: f.slotOwners.length };
};
const afterFull = await inFlight();

fs.rmSync(filler);
// Space is back: the ledger takes work again once it has topped its room up (tried at most once a second).
let again: Awaited<ReturnType<typeof ledger.reserve>> | undefined;
for (let i = 0; i < 100 && !again; i++) {
  again = await ledger.reserve(view, 'preview').catch(() => undefined);
  if (!again) await new Promise((r) => setTimeout(r, 100));
}
if (!again) throw new Error('the ledger did not take work again after the filler was removed');
await ledger.settle(again, { outputPixels: 1, status: 200 });
const recovered = { ...(await inFlight()), charged: charged + again.credits };
await ledger.close();
const run: FullDiskRun = { grown, refused, charged, afterFull, recovered };
process.stdout.write(`${JSON.stringify(run)}\n`);
