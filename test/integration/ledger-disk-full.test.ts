// The LMDB ledger's disk fills up under a real server: every answer is a 200 whose charge is on the
// ledger or a 503 `ledger_unavailable` with Retry-After, none hangs, the request in flight settles, no
// hold or slot is left, and once the filler is gone the server takes work again with credits exact.
// Root only (it mounts a 20 MB tmpfs).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { postImage } from '../helpers/api.js';
import { firstError } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { pollUntilAsync } from '../helpers/poll.js';
import { startTestServer, quietLogger } from '../helpers/server.js';
import { fillDisk, mountTmpfs } from '../helpers/tmpfs.js';
import { openLmdbBackend, isDiskFailure } from '../../src/ledger/lmdb-backend.js';
import type { LedgerBackend } from '../../src/ledger/ledger.js';
import type { FakePool } from '../helpers/fake-pool.js';

t.test(
  'a full disk under the LMDB ledger: 200 (settled) or 503 ledger_unavailable, holds back, recovery without a restart',
  { skip: process.getuid?.() !== 0 && 'not root: cannot mount a tmpfs' },
  async (t) => {
    const mnt = mountTmpfs(t, 20);
    if ('skip' in mnt) return t.pass('not run', { skip: mnt.skip });
    const ledger = openLmdbBackend(path.join(mnt.dir, 'data'));
    t.teardown(() => ledger.close());
    const { account, apiKey } = await ledger.createAccount({ subscription: 100, freeCallsPerMonth: 0, concurrency: 3 });
    const srv = await startTestServer<FakePool, LedgerBackend>(t, { ledger, log: quietLogger });
    const headers = { 'X-Api-Key': apiKey };
    const image = await makeImage('png');
    let charged = 0;
    let ok = 0;
    const settled = (res: { status: number; headers: Record<string, string | string[] | undefined> }) => {
      t.equal(res.status, 200);
      charged += Number(res.headers['x-credits-charged']);
      ok++;
    };

    settled(await postImage(srv.url, image, {}, headers));
    // One request is being worked on when the disk fills.
    const gate = srv.pool.hold();
    const inFlight = postImage(srv.url, image, {}, headers);
    await gate.started;

    const filler = path.join(mnt.dir, 'filler');
    t.ok(fillDisk(filler) > 0, 'the disk is full');
    // The ledger grows until the room it keeps on the disk is used up (long labels make it quick).
    let grown = 0;
    for (; grown < 10_000; grown++) {
      const refused = await ledger.createAccount({ label: 'x'.repeat(8000) }).then(
        () => false,
        (err: unknown) => isDiskFailure(err) || Promise.reject(err),
      );
      if (refused) break;
    }
    t.ok(grown < 10_000, `the ledger refused new work once its room was used (${grown} accounts in)`);

    for (let i = 0; i < 3; i++) {
      const res = await postImage(srv.url, image, {}, headers);
      t.equal(res.status, 503, 'new work on the full disk: 503');
      t.equal(firstError(res).code, 'ledger_unavailable');
      t.equal(res.headers['retry-after'], '5');
    }
    gate.release();
    settled(await inFlight); // its settle fits in the room kept for give-backs
    t.same(await ledger.inFlight(account.id), { holds: 0, slotOwners: [] }, 'no hold or slot left by the refused requests or the settled one');
    t.equal((await ledger.balances(account.id)).total, 100 - charged, 'only the 200s charged');

    fs.rmSync(filler);
    const back = await pollUntilAsync(
      async () => {
        const res = await postImage(srv.url, image, {}, headers);
        if (res.status === 200) return res;
        t.equal(firstError(res).code, 'ledger_unavailable', 'until the room is topped up again: 503 ledger_unavailable');
        return undefined;
      },
      'a 200 after the filler was removed',
      10_000,
      200,
    );
    settled(back);
    settled(await postImage(srv.url, image, {}, headers));
    t.equal((await ledger.balances(account.id)).total, 100 - charged, 'credits exact: every 200 charged once, nothing else');
    t.equal((await ledger.summarizeUsage(0)).find((u) => u.accountId === account.id)?.requests, ok, 'one usage entry per 200');
    t.same(await ledger.inFlight(account.id), { holds: 0, slotOwners: [] });
  },
);
