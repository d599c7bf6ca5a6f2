// bench:faults `disk-full-sustained`: a server on LMDB in a 20 MB tmpfs that stays full for 60 s
// (`--full-s`) under the fault stream. The filler takes every free byte; after 5 s a second process on
// the same folder grows the ledger until it refuses a write, so the server's room on the disk is used up
// too and new work must be refused (503) for the rest of the window. Then the filler is removed. Beside
// the stream's row it reports: the server still up through the fault, LMDB's own "Write error" lines in
// its log (the path that corrupts lmdb-js 3.5.6's heap: must be 0), holds and slots left on the key
// after the stream, and how the server ended on SIGTERM. Root only (it mounts the tmpfs).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import sharp from 'sharp';
import { fillDisk } from './fault-report.js';
import { multipartBody } from '../test/harness/multipart.js';
import { cutoutCli, startServer, type Server } from '../test/harness/soak-driver.js';
import { openLmdbBackend, isDiskFailure } from '../src/ledger/lmdb-backend.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const FULL_MS = Number(arg('full-s') ?? 60) * 1000;
/** The server works on the room it keeps this long before the other process uses that room up. */
const ROOM_MS = 5_000;
const SIGTERM_WAIT_MS = 30_000;

export interface DiskFullSustained {
  /** The server process was still running when the filler was removed. */
  upThroughFault: boolean;
  /** "Write error" lines LMDB printed in the server's log. */
  lmdbWriteErrors: number;
  /** Accounts the other process added before the ledger refused one. */
  grown: number;
  /** The key's holds and slots once the stream had stopped. */
  left: { holds: number; slots: number };
  /** How the server ended on SIGTERM, and how long it took. */
  sigterm: { exit: string; ms: number };
}

export type UnderFault<R> = (
  server: Server,
  key: string,
  bodies: Array<{ body: Buffer; type: string }>,
  inject: () => Promise<{ extra?: { diskFullSustained?: DiskFullSustained } }>,
) => Promise<R>;

/** Small generated photos (a gradient with a disc), preview and full: many requests in the window. */
async function smallBodies(): Promise<Array<{ body: Buffer; type: string }>> {
  const out: Array<{ body: Buffer; type: string }> = [];
  for (const [w, h] of [
    [320, 240],
    [480, 360],
  ] as const) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><defs><linearGradient id="g"><stop offset="0" stop-color="#4a7"/><stop offset="1" stop-color="#27c"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><circle cx="${w / 2}" cy="${h / 2}" r="${h / 3}" fill="#c42"/></svg>`;
    const png = await sharp(Buffer.from(svg)).png().toBuffer();
    for (const size of ['preview', 'full']) out.push(multipartBody(png, { size, format: 'png' }));
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sigterm(server: Server): Promise<{ exit: string; ms: number }> {
  const t0 = performance.now();
  if (server.child.exitCode !== null || server.child.signalCode !== null)
    return { exit: `gone before (${server.child.exitCode ?? server.child.signalCode})`, ms: 0 };
  const exited = new Promise<string>((r) => server.child.once('exit', (code, signal) => r(signal ?? `code ${code}`)));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), SIGTERM_WAIT_MS);
  const exit = await exited;
  clearTimeout(timer);
  return { exit, ms: Math.round(performance.now() - t0) };
}

/** Runs the fault; `skipped` (why) when no tmpfs can be mounted. */
export async function diskFullSustained<R extends object>(
  credits: number,
  clients: number,
  underFault: UnderFault<R>,
): Promise<(R & { diskFullSustained?: DiskFullSustained }) | { skipped: string }> {
  const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-faults-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mnt], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    fs.rmSync(mnt, { recursive: true, force: true });
    return { skipped: `cannot mount a tmpfs (${(mounted.stderr || mounted.error?.message || '').trim()}): run as root` };
  }
  const dataDir = path.join(mnt, 'data');
  const filler = path.join(mnt, 'filler');
  let server: Server | undefined;
  let report: (R & { diskFullSustained?: DiskFullSustained }) | undefined;
  try {
    const key = cutoutCli(
      ['keys', 'create', '--credits', String(credits), '--free-calls', '0', '--concurrency', String(clients), '--rate', '1000000', '--label', 'faults'],
      dataDir,
    );
    server = await startServer(dataDir, { args: ['--workers', '1'] });
    const srv = server;
    const bodies = await smallBodies();
    let grown = 0;
    let upThroughFault = false;
    report = (await underFault(srv, key, bodies, async () => {
      const t0 = performance.now();
      fillDisk(filler);
      await sleep(ROOM_MS);
      // Another process on the folder grows the ledger (long labels: quick) until it refuses a write.
      const other = openLmdbBackend(dataDir);
      try {
        for (; grown < 10_000; grown++) {
          const refused = await other.createAccount({ label: 'x'.repeat(8000) }).then(
            () => false,
            (err: unknown) => isDiskFailure(err) || Promise.reject(err),
          );
          if (refused) break;
        }
      } finally {
        await other.close();
      }
      await sleep(Math.max(0, FULL_MS - (performance.now() - t0)));
      upThroughFault = srv.child.exitCode === null && srv.child.signalCode === null;
      fs.rmSync(filler);
      return {};
    })) as R & { diskFullSustained?: DiskFullSustained };
    const ledger = openLmdbBackend(dataDir);
    let left = { holds: -1, slots: -1 };
    try {
      const accountId = await ledger.resolveAccount(key);
      const f = accountId ? await ledger.inFlight(accountId) : undefined;
      if (f) left = { holds: f.holds, slots: f.slotOwners.length };
    } finally {
      await ledger.close();
    }
    const stopped = await sigterm(srv);
    report.diskFullSustained = { upThroughFault, lmdbWriteErrors: srv.stderr.join('').split('Write error').length - 1, grown, left, sigterm: stopped };
    return report;
  } finally {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    spawnSync('umount', [mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  }
}

/** The fault's own line under the table. */
export function describe(r: DiskFullSustained): string {
  return `bench:faults: disk-full-sustained (generated 320×240 and 480×360 PNGs): server up through the fault ${r.upThroughFault ? 'yes' : 'NO'}, LMDB write errors ${r.lmdbWriteErrors}, ledger grown by ${r.grown} accounts until refused, left on the key: ${r.left.holds} holds ${r.left.slots} slots, SIGTERM: ${r.sigterm.exit} after ${r.sigterm.ms} ms`;
}

/** Not clean: the server died or hung, LMDB met a write error, or something was left held. */
export function isBad(r: DiskFullSustained): boolean {
  return !r.upThroughFault || r.lmdbWriteErrors > 0 || r.left.holds !== 0 || r.left.slots !== 0 || r.sigterm.exit !== 'code 0';
}
