// Account-side acceptance helpers: run `cutout serve` as real child processes over one data folder, read
// the same LMDB ledger from the test process, and make requests that can be held while they are worked on.
//
// Every server is spawned in its own process group (`detached`), so killing the group also kills the
// children that `--processes N` forks. Groups are killed (SIGKILL) in t.teardown, on process exit, and
// by an overall deadline, so a failing or stuck test never leaves servers behind.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { openLmdbLedger, type LmdbLedger } from '../../src/ledger/lmdb-ledger.js';
import { multipart, type TestResponse } from './http-client.js';
import { freePort } from '../harness/postgres-server.js';

export const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
/** `cutout serve` whose image_url downloads may reach loopback: heldRequest's image host is on 127.0.0.1. */
const SERVE_LOOPBACK = fileURLToPath(new URL('../harness/serve-loopback-entry.js', import.meta.url));
const REMOVEBG = '/v1.0/removebg';

// ---------------------------------------------------------------------------------------------------------
// Process bookkeeping

const liveGroups = new Set<number>();

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: already gone.
  }
  liveGroups.delete(pid);
}

const killAll = (): void => {
  for (const pid of [...liveGroups]) killGroup(pid);
};
process.once('exit', killAll);
// A test process stopped by a signal (tap's timeout, Ctrl-C) does not emit 'exit': kill the servers, step
// aside and re-raise, so the signal then does whatever it would have done without us.
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  const onSignal = (): void => {
    killAll();
    process.removeListener(sig, onSignal);
    process.kill(process.pid, sig);
  };
  process.on(sig, onSignal);
}

/** Kill every server still running after `ms` (a backstop; t.teardown normally does it first). */
export function overallDeadline(t: Test, ms: number): void {
  const timer = setTimeout(() => {
    for (const pid of [...liveGroups]) killGroup(pid);
    t.fail(`overall deadline of ${ms} ms passed; servers killed`);
  }, ms);
  timer.unref();
  t.teardown(() => clearTimeout(timer));
}

// A loopback port that is free right now (for `--processes N`, where port 0 would differ per process).
export { freePort } from '../harness/postgres-server.js';

/**
 * A fresh data folder, removed at teardown. Not t.testdir(): its ".test.js-…" suffix reads as a file
 * extension to LMDB.
 */
export function makeDataDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'cutout-acct-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface ServeOptions {
  dataDir: string;
  /** Fixed port; default: a free one picked now. */
  port?: number;
  processes?: number;
  workers?: number;
  /** How long to wait for every process to print "listening on". Default 120 s. */
  startTimeoutMs?: number;
  /** More `serve` flags (`--ledger postgres://…`, `--ledger-lease 3`). */
  extraArgs?: string[];
}

export interface Served {
  child: ChildProcess;
  /** The process group id (= the spawned process's pid). */
  pid: number;
  port: number;
  base: string;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL the whole process group and wait until the spawned process is gone. */
  kill9(): Promise<void>;
}

/** `cutout serve …` (test/harness/serve-loopback-entry.ts) as a child; resolves once every process listens. */
export async function serve(t: Test, opts: ServeOptions): Promise<Served> {
  const processes = opts.processes ?? 1;
  const port = opts.port ?? (await freePort());
  const args = [SERVE_LOOPBACK, '--host', '127.0.0.1', '--port', String(port), '--data', opts.dataDir, '--workers', String(opts.workers ?? 1), '--no-demo-key'];
  if (processes > 1) args.push('--processes', String(processes));
  args.push(...(opts.extraArgs ?? []));
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  liveGroups.add(pid);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const kill9 = async (): Promise<void> => {
    killGroup(pid);
    await exited;
  };
  t.teardown(kill9);

  let out = '';
  let onOutput: () => void = () => {};
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    onOutput();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
    onOutput();
  });

  const listening = () => (out.match(/cutout listening on /g) ?? []).length;
  const startTimeoutMs = opts.startTimeoutMs ?? 120_000;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within ${startTimeoutMs} ms:\n${out}`)), startTimeoutMs);
    const check = () => {
      if (listening() >= processes) {
        clearTimeout(timer);
        onOutput = () => {};
        resolve();
      }
    };
    onOutput = check;
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${out}`));
    });
    check();
  });
  return { child, pid, port, base: `http://127.0.0.1:${port}`, output: () => out, exited, kill9 };
}

/** Run `cutout <args…>` to completion (keys/usage admin commands), with a timeout. */
export function cli(args: string[], timeoutMs = 30_000, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cutout ${args.join(' ')} timed out:\n${stdout}${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Ledger access from the test process (LMDB is multi-process; reads reset the snapshot first)

export interface AccountSpec {
  label?: string;
  subscription?: number;
  freeCallsPerMonth?: number;
  concurrency?: number;
  ratePerMinute?: number;
}

export interface LedgerProbe {
  ledger: LmdbLedger;
  create(spec: AccountSpec): { id: string; apiKey: string };
  total(accountId: string): number;
  /** Holds (reservations) of the account right now. */
  holds(accountId: string): number;
  /** Concurrency slots of the account right now, with their owner pids. */
  slots(accountId: string): { count: number; pids: number[] };
  /** Usage entries (settled requests) of the account. */
  usage(accountId: string): number;
}

export function openProbe(t: Test, dataDir: string): LedgerProbe {
  const ledger = openLmdbLedger(dataDir);
  t.teardown(() => ledger.close());
  return {
    ledger,
    create(spec) {
      const { account, apiKey } = ledger.createAccount({ label: 'acceptance', freeCallsPerMonth: 0, ratePerMinute: 100_000, ...spec });
      return { id: account.id, apiKey };
    },
    total: (id) => ledger.balances(id).total,
    holds: (id) => ledger.inFlight(id).holds,
    slots(id) {
      const owners = ledger.inFlight(id).slotOwners;
      return { count: owners.length, pids: owners.map(Number) };
    },
    usage: (id) => ledger.summarizeUsage(0).find((s) => s.accountId === id)?.requests ?? 0,
  };
}

/** Poll `check` every `intervalMs` until it returns a truthy value; reject after `deadlineMs`. */
export async function pollUntil<T>(check: () => T | undefined | null | false, what: string, deadlineMs = 30_000, intervalMs = 10): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Requests

export interface Outcome {
  /** The response, or null when the connection failed (reset by a killed server, timeout). */
  res: TestResponse | null;
  error?: Error;
}

/**
 * A POST /v1.0/removebg that is being worked on and waits: its JSON body names an `image_url` on this
 * process's holding image host (heldImageHost), which answers only at `finish()`. The server takes the
 * request's concurrency slot once the body is in, then waits for the download, so the request holds a
 * slot and no credit until finish() (a slow upload holds nothing: test/integration/slow-upload.test.ts).
 * Servers must allow loopback image URLs (serve() starts them so).
 * `outcome` never rejects and always settles within `timeoutMs`.
 */
export interface HeldRequest {
  finish(): void;
  abort(): void;
  outcome: Promise<Outcome>;
  /** True once any response (or error) arrived. */
  done(): boolean;
}

/** path → the image and the gate its answer waits on. */
const heldImages = new Map<string, { image: Uint8Array; released: Promise<void> }>();
let imageHost: Promise<string> | undefined;
let heldCounter = 0;

/** A loopback HTTP server in this test process that answers each held image once it is released. */
function heldImageHost(): Promise<string> {
  imageHost ??= new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      const held = heldImages.get(req.url ?? '');
      if (!held) return void res.writeHead(404).end();
      void held.released.then(() => res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': held.image.byteLength }).end(held.image));
    });
    server.unref(); // never keeps the test process alive
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`));
  });
  return imageHost;
}

export function heldRequest(base: string, apiKey: string, image: Uint8Array, fields: Record<string, string>, timeoutMs = 120_000): HeldRequest {
  const path = `/held/${process.pid}-${++heldCounter}.jpg`;
  let release!: () => void;
  heldImages.set(path, { image, released: new Promise<void>((r) => (release = r)) });
  const sent = heldImageHost().then((host) => JSON.stringify({ image_url: `${host}${path}`, ...fields }));
  let settled = false;
  let req: http.ClientRequest | undefined;
  let aborted = false;
  const outcome = new Promise<Outcome>((resolve) => {
    const settle = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      heldImages.delete(path);
      resolve(o);
    };
    const timer = setTimeout(() => {
      settle({ res: null, error: new Error(`no response within ${timeoutMs} ms`) });
      req?.destroy();
    }, timeoutMs);
    void sent.then(
      (body) => {
        if (aborted) return settle({ res: null, error: new Error('aborted before it was sent') });
        req = http.request(base + REMOVEBG, {
          method: 'POST',
          agent: false,
          headers: { 'X-Api-Key': apiKey, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        });
        req.on('response', (res) => collect(res, settle));
        req.on('error', (error) => settle({ res: null, error }));
        req.end(body);
      },
      (error: Error) => settle({ res: null, error }),
    );
  });
  return {
    finish: () => release(),
    abort() {
      aborted = true;
      req?.destroy();
    },
    outcome,
    done: () => settled,
  };
}

/** Reads a response whole and settles with it (or with its error). */
function collect(res: http.IncomingMessage, settle: (o: Outcome) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('error', (error) => settle({ res: null, error }));
  res.on('end', () => {
    const b = Buffer.concat(chunks);
    settle({ res: { status: res.statusCode ?? 0, headers: res.headers, body: b, text: () => b.toString('utf8'), json: () => JSON.parse(b.toString('utf8')) } });
  });
}

/** A whole multipart POST /v1.0/removebg, as a client uploads a photo; never rejects, settles within `timeoutMs`. */
export function removeBg(base: string, apiKey: string, image: Uint8Array, fields: Record<string, string>, timeoutMs = 120_000): Promise<Outcome> {
  const { body, contentType } = multipart([
    { name: 'image_file', value: image, filename: 'image_file' },
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
  ]);
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    const settle = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = http.request(base + REMOVEBG, {
      method: 'POST',
      agent: false,
      headers: { 'X-Api-Key': apiKey, 'Content-Type': contentType, 'Content-Length': body.length },
    });
    const timer = setTimeout(() => {
      settle({ res: null, error: new Error(`no response within ${timeoutMs} ms`) });
      req.destroy();
    }, timeoutMs);
    req.on('response', (res) => collect(res, settle));
    req.on('error', (error) => settle({ res: null, error }));
    req.end(body);
  });
}

/** GET with a timeout; never rejects. */
export function get(url: string, headers: Record<string, string>, timeoutMs = 30_000): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = http.request(url, { method: 'GET', agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (error) => settle({ res: null, error }));
      res.on('end', () => {
        const b = Buffer.concat(chunks);
        settle({
          res: { status: res.statusCode ?? 0, headers: res.headers, body: b, text: () => b.toString('utf8'), json: () => JSON.parse(b.toString('utf8')) },
        });
      });
    });
    const timer = setTimeout(() => {
      settle({ res: null, error: new Error(`no response within ${timeoutMs} ms`) });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error) => settle({ res: null, error }));
    req.end();
  });
}

/** The error envelope's code, or undefined. */
export function errorCode(res: TestResponse | null): string | undefined {
  if (!res) return undefined;
  try {
    return (res.json() as { errors?: Array<{ code?: string }> }).errors?.[0]?.code;
  } catch {
    return undefined;
  }
}

/** Status histogram for messages: `{200: 3, 402: 9}`; `err` counts failed connections. */
export function histogram(outcomes: Outcome[]): Record<string, number> {
  const h: Record<string, number> = {};
  for (const o of outcomes) {
    const k = o.res ? String(o.res.status) : 'err';
    h[k] = (h[k] ?? 0) + 1;
  }
  return h;
}
