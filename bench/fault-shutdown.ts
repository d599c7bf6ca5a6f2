// The `shutdown` fault of bench:faults: SIGTERM to `cutout serve` while it answers one 12 MP photo at
// size=full. Each trial starts a fresh server (one worker, the default 30 s drain) on its own LMDB
// ledger and key, sends the photo, and signals: half the trials read the answer at 1 MB/s and are
// signalled when its headers arrive (the answer is then still streaming), half read at full speed
// and are signalled 0 to 2 s after the upload (while the photo is processed). A trial passes when
// the server exits 0 and the client got a 200 whose body is Content-Length bytes of a PNG that
// decodes, and the key's balance fell by the X-Credits-Charged it announced (read from the ledger
// after the exit).
//
//   npm run bench:faults -- --faults shutdown [--shutdown-trials 20]

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { multipartBody } from '../test/harness/multipart.js';
import { cutoutCli, startServer, type Server } from '../test/harness/soak-driver.js';

const CREDITS = 10;
/** The slow readers' pace: what the fault injection that found the cut answers read at. */
const SLOW_BYTES_PER_S = 1024 * 1024;
/** When the fast readers' signal comes, after their upload was sent (one per trial, in turn). */
const FAST_SIGNAL_DELAYS_MS = [0, 500, 1000, 1500, 2000];
/** A trial that has not ended by then is counted as hung (and its server killed). */
const TRIAL_LIMIT_MS = 120_000;

export interface ShutdownTrial {
  slowReader: boolean;
  /** After the headers (slow readers), or this long after the upload (fast ones). */
  signalAfter: string;
  exitCode: number | null;
  status: number;
  contentLength: number;
  received: number;
  /** The body ended at Content-Length and decodes as a PNG. */
  complete: boolean;
  creditsAnnounced: number;
  balanceFall: number | null;
  chargedOnce: boolean;
  /** The server's drain lines (cuts), if any. */
  drainLines: string[];
}

export interface ShutdownReport {
  photo: string;
  trials: ShutdownTrial[];
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** POST the photo; `onHeaders`/`onUploaded` say when to signal. Resolves when the answer ended or was cut. */
function post(
  url: string,
  key: string,
  form: { body: Buffer; type: string },
  slow: boolean,
  onUploaded: () => void,
  onHeaders: () => void,
): Promise<{ status: number; length: number; body: Buffer; ended: boolean; credits: number }> {
  return new Promise((resolve) => {
    const req = http.request(
      `${url}/v1.0/removebg`,
      { method: 'POST', agent: false, headers: { 'X-Api-Key': key, 'Content-Type': form.type, 'Content-Length': form.body.length } },
      (res) => {
        onHeaders();
        const chunks: Buffer[] = [];
        let got = 0;
        const t0 = performance.now();
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          got += c.length;
          if (!slow) return;
          // Ahead of the pace: stop reading until it catches up (the socket's buffers fill meanwhile).
          const aheadMs = (got / SLOW_BYTES_PER_S) * 1000 - (performance.now() - t0);
          if (aheadMs > 0) {
            res.pause();
            setTimeout(() => res.resume(), aheadMs);
          }
        });
        const done = (ended: boolean) =>
          resolve({
            status: res.statusCode ?? 0,
            length: Number(res.headers['content-length'] ?? -1),
            body: Buffer.concat(chunks),
            ended,
            credits: Number(res.headers['x-credits-charged'] ?? 0),
          });
        res.on('end', () => done(true));
        res.on('close', () => done(res.complete));
        res.on('error', () => done(false));
      },
    );
    req.on('finish', onUploaded);
    req.on('error', () => resolve({ status: 0, length: -1, body: Buffer.alloc(0), ended: false, credits: 0 }));
    req.end(form.body);
  });
}

async function decodesAsPng(bytes: Buffer): Promise<boolean> {
  try {
    const img = sharp(bytes);
    const meta = await img.metadata();
    if (meta.format !== 'png' || !meta.width || !meta.height) return false;
    const pixels = await img.raw().toBuffer();
    return pixels.length === meta.width * meta.height * (meta.channels ?? 0);
  } catch {
    return false;
  }
}

async function trial(index: number, form: { body: Buffer; type: string }): Promise<ShutdownTrial> {
  const slow = index % 2 === 1;
  const delayMs = FAST_SIGNAL_DELAYS_MS[Math.floor(index / 2) % FAST_SIGNAL_DELAYS_MS.length]!;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-faults-shutdown-'));
  let server: Server | undefined;
  try {
    const key = cutoutCli(['keys', 'create', '--credits', String(CREDITS), '--free-calls', '0', '--label', 'shutdown'], dataDir);
    server = await startServer(dataDir, { args: ['--workers', '1'] });
    const srv = server;
    let out = '';
    srv.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => srv.child.once('exit', (code) => r(code)));
    const signal = () => srv.child.exitCode === null && srv.child.kill('SIGTERM');
    const limit = setTimeout(() => srv.child.kill('SIGKILL'), TRIAL_LIMIT_MS);
    const answer = await post(
      srv.url,
      key,
      form,
      slow,
      () => void (!slow && setTimeout(signal, delayMs)),
      () => void (slow && signal()),
    );
    const exitCode = await exited;
    clearTimeout(limit);
    const complete = answer.status === 200 && answer.ended && answer.body.length === answer.length && (await decodesAsPng(answer.body));
    const accounts = JSON.parse(cutoutCli(['keys', 'list', '--json'], dataDir)) as Array<{ label: string; balances: { total: number; freeCalls: number } }>;
    const account = accounts.find((a) => a.label === 'shutdown');
    const balanceFall = account ? CREDITS - account.balances.total : null;
    return {
      slowReader: slow,
      signalAfter: slow ? 'headers' : `upload + ${delayMs} ms`,
      exitCode,
      status: answer.status,
      contentLength: answer.length,
      received: answer.body.length,
      complete,
      creditsAnnounced: answer.credits,
      balanceFall,
      chargedOnce: answer.status === 200 && answer.credits > 0 && balanceFall === answer.credits,
      drainLines: out.split('\n').filter((l) => l.startsWith('drain:')),
    };
  } finally {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Runs the trials (`--shutdown-trials N`, default 20) on `photoFile`; one line per trial on stderr. */
export async function shutdownFault(photoFile: string): Promise<ShutdownReport> {
  const count = Number(arg('shutdown-trials') ?? 20);
  const form = multipartBody(fs.readFileSync(photoFile), { size: 'full', format: 'png' });
  const trials: ShutdownTrial[] = [];
  for (let i = 0; i < count; i++) {
    const r = await trial(i, form);
    trials.push(r);
    console.error(
      `bench:faults: shutdown ${i + 1}/${count} (${r.slowReader ? '1 MB/s' : 'full speed'}, SIGTERM after ${r.signalAfter}): exit ${r.exitCode}, ${r.status}, ` +
        `${r.received} of ${r.contentLength} bytes${r.complete ? ', PNG decodes' : ' NOT COMPLETE'}, credits ${r.creditsAnnounced} announced / ${r.balanceFall} fallen${r.drainLines.length ? `; ${r.drainLines.join(' | ')}` : ''}`,
    );
  }
  return { photo: path.basename(photoFile), trials };
}

/** The report's row: trials, complete answers, cut ones, charged once, clean exits. */
export function shutdownRow(r: ShutdownReport): string {
  const n = r.trials.length;
  const slow = r.trials.filter((x) => x.slowReader).length;
  const complete = r.trials.filter((x) => x.complete).length;
  const once = r.trials.filter((x) => x.chargedOnce).length;
  const exits = r.trials.filter((x) => x.exitCode === 0).length;
  return `| shutdown (${r.photo}, size=full) | trials ${n} (${slow} read at 1 MB/s) | complete ${complete}/${n} | cut ${n - complete} | charged once ${once}/${n} | exit 0 ${exits}/${n} |`;
}

/** A clean run: every trial complete, charged once, and every server exited 0. */
export function shutdownClean(r: ShutdownReport): boolean {
  return r.trials.length > 0 && r.trials.every((x) => x.complete && x.chargedOnce && x.exitCode === 0);
}
