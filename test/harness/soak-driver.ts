// Soak driver: one real `cutout serve` process (real pool, real LMDB ledger in a temp folder), real
// photos cycling, N requests at concurrency C, sizes mixed. Samples the server's RSS from /proc while
// it runs and checks the credits the headers announced against the ledger's delta. Used by
// bench/soak.ts (npm run bench:soak) and by the CI-sized soak test; bounded in count and time.

import { launchEnv } from '../../src/process/launch-env.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';
import { multipartBody } from './multipart.js';
import { reapWithBench } from './server-reaper.js';
import { median, quantile } from './stats.js';

const CLI = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');

export interface SoakOptions {
  requests: number;
  concurrency: number;
  /** Image files to cycle through. */
  photos: string[];
  /** Sizes to cycle through (remove.bg values), e.g. ['preview', 'full']. */
  sizes: string[];
  workers?: number;
  model?: string;
  /** A client gives up after this long and counts the request as unanswered. */
  clientTimeoutMs?: number;
  /** Server --request-timeout in seconds (default: the server's own). */
  requestTimeoutSeconds?: number;
  /** Stop starting requests after this long (the run stays bounded). */
  budgetMs?: number;
  /** Extra environment for the server process. */
  env?: NodeJS.ProcessEnv;
  /** Progress lines go here (default: none). */
  progress?: (line: string) => void;
  /** Wait for the idle server's RSS to settle before the run (default true; see settledRss). */
  settleIdle?: boolean;
}

export interface RequestRecord {
  index: number;
  photo: string;
  size: string;
  /** 0 = never answered. */
  status: number;
  latencyMs: number;
  /** Server-Timing queue;dur, when the server reported it. */
  queueMs: number | null;
  credits: number;
  bytes: number;
  /** Body of a non-200 (truncated), to see why a valid photo was refused. */
  error?: string;
}

export interface RssSample {
  /** The server's minor page faults so far (processTreeMinorFaults). */
  faults: number;
  t: number;
  done: number;
  rssMb: number;
}

export interface SoakReport {
  requests: number;
  concurrency: number;
  workers: number;
  model: string;
  sizes: string[];
  photos: number;
  answered: number;
  unanswered: number;
  statuses: Record<string, number>;
  wallS: number;
  imagesPerS: number;
  latencyMs: { p50: number; p99: number; max: number; maxOverP50: number };
  queueWaitMs: { p50: number; max: number; reported: number };
  /** Time from leaving the queue to the answer (latency minus queue wait). */
  serviceMs: { p50: number; max: number };
  credits: { fromHeaders: number; ledgerDelta: number; exact: boolean };
  /** The server's minor page faults per answered request: over the run, and over its second half (steady state). */
  faultsPerRequest: { all: number; secondHalf: number };
  /** startup: as it listens; idle: once settled (settledRss), before the first request. */
  /** idleAfter5s: IDLE_CHECK_MS after the last answer (NaN when settleIdle is false). */
  rssMb: {
    idleAfter5s: number;
    startup: number;
    idle: number;
    peak: number;
    hwm: number;
    secondTenth: number;
    lastTenth: number;
    growthPct: number;
    growthPerRequestMb: number;
  };
  non200: RequestRecord[];
  samples: RssSample[];
  cpu: { model: string; cores: number; flags: string[] };
}

/**
 * RSS of an idle process once it has settled: sampled every 500 ms until at least `minMs` have passed
 * and the last 2 s moved by less than 0.5 MB (at most `maxMs`). An idle server is not a server that
 * has just listened: V8's memory reducer shrinks the main thread's young generation (3.3 → 0.26 MB)
 * and returns pooled heap pages some 8–10 s after the start-up garbage collection, 3–4 MB in all
 * (docs/memory.md, "Idle").
 */
export async function settledRss(pid: number, minMs = 15_000, maxMs = 30_000): Promise<number> {
  const t0 = performance.now();
  const recent: number[] = [];
  for (;;) {
    recent.push(processMemory(pid).rssMb);
    if (recent.length > 5) recent.shift();
    const elapsed = performance.now() - t0;
    const steady = recent.length === 5 && Math.max(...recent) - Math.min(...recent) < 0.5;
    if ((elapsed >= minMs && steady) || elapsed >= maxMs) return recent[recent.length - 1]!;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Runs `cutout <args> --data <dataDir>` (e.g. `keys create …`) and returns its trimmed stdout. */
export function cutoutCli(args: string[], dataDir: string): string {
  const r = spawnSync(process.execPath, [CLI, ...args, '--data', dataDir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cutout ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** How long after its last answer an idle server must be back to its idle footprint (docs/memory.md). */
export const IDLE_CHECK_MS = 5000;

/** The process's RSS `ms` after now, in MB. */
async function rssAfter(pid: number, ms: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return processMemory(pid).rssMb;
}

/** VmRSS and VmHWM of a process in MB (the worker threads are inside it). */
export function processMemory(pid: number): { rssMb: number; hwmMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/** A process and every process under it (a `--processes N` server: the supervisor and its children). */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone since readdir
    }
  }
  const all: number[] = [];
  for (const queue = [pid]; queue.length > 0; ) {
    const p = queue.pop()!;
    all.push(p);
    queue.push(...(children.get(p) ?? []));
  }
  return all;
}

/** Sums `read(pid)` over a process tree; a process that ends while this reads counts as nothing. */
function sumOverTree(pid: number, read: (p: number) => number): number {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      total += read(p);
    } catch {
      // gone
    }
  }
  return total;
}

/**
 * VmRSS of a process and every process under it, in MB: a `--processes N` server is a supervisor
 * (~60 MB) whose N children hold the pools.
 */
export function processTreeRssMb(pid: number): number {
  return sumOverTree(pid, (p) => processMemory(p).rssMb);
}

/** Minor page faults of a process (all its threads: /proc/PID/stat field 10) and every process under it. */
export function processTreeMinorFaults(pid: number): number {
  return sumOverTree(pid, (p) => {
    const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
  });
}

export interface ServerOptions {
  /** `cutout serve` flags after the fixed ones (loopback, any free port, --data, --no-demo-key). */
  args: string[];
  /** Extra environment for the server process. */
  env?: NodeJS.ProcessEnv;
  /** A module run instead of the cutout CLI, given the serve flags without the verb (test/harness/serve-loopback-entry.ts). */
  entry?: string;
  /** A cgroup's `cgroup.procs` (test/harness/memory-cgroup.ts): the server joins it before node starts, so it reads its limit. */
  cgroupProcs?: string;
}

export interface Server {
  child: ChildProcess;
  url: string;
  stderr: string[];
  /** What the server printed on stdout before it listened (its device line among them). */
  startup: string[];
}

/** The soak's server flags: one worker unless told, the soak's model and request timeout. */
function soakServerArgs(opts: SoakOptions): string[] {
  const args = ['--workers', String(opts.workers ?? 1)];
  if (opts.model) args.push('--model', opts.model);
  if (opts.requestTimeoutSeconds !== undefined) args.push('--request-timeout', String(opts.requestTimeoutSeconds));
  return args;
}

/**
 * Starts `cutout serve` (or `opts.entry`) as a child process on a free loopback port and resolves once it listens.
 * Rejects with the server's stderr (its reason) when it exits before listening.
 */
export async function startServer(dataDir: string, opts: ServerOptions): Promise<Server> {
  const args = [...(opts.entry ? [opts.entry] : [CLI, 'serve']), '--host', '127.0.0.1', '--port', '0', '--data', dataDir, '--no-demo-key', ...opts.args];
  // As bin/cutout starts it (huge pages for malloc's big blocks), unless the caller's env says otherwise.
  const env = launchEnv({ ...process.env, ...opts.env });
  const child = opts.cgroupProcs
    ? spawn('/bin/sh', ['-c', `echo $$ > "${opts.cgroupProcs}" && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  reapWithBench(child);
  const stderr: string[] = [];
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /cutout listening on (\S+)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${stderr.join('')}`)));
  });
  return { child, url, stderr, startup: out.split('\n').filter((l) => l && !l.startsWith('cutout listening on')) };
}

export async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise<void>((r) => server.child.once('exit', () => r()));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Empty when `keepBody` said not to keep it. */
  body: Buffer;
  /** Bytes received. */
  bytes: number;
}

export interface SendOptions {
  /** Abort the request (it resolves null, as an unanswered one). */
  signal?: AbortSignal;
  /** Keep the body of a response with this status (default: always). Counting alone keeps a fast client lean. */
  keepBody?: (status: number) => boolean;
}

/** One request; resolves null when it was never answered within `timeoutMs` (or was aborted). */
export function send(
  agent: http.Agent,
  url: string,
  method: string,
  headers: Record<string, string | number>,
  body: Buffer | undefined,
  timeoutMs: number,
  opts: SendOptions = {},
): Promise<Answer | null> {
  return new Promise((resolve) => {
    const req = (url.startsWith('https:') ? https : http).request(url, { method, agent, headers, ...(opts.signal ? { signal: opts.signal } : {}) }, (res) => {
      const status = res.statusCode ?? 0;
      const keep = opts.keepBody ? opts.keepBody(status) : true;
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (keep) chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status, headers: res.headers, body: keep ? Buffer.concat(chunks) : Buffer.alloc(0), bytes });
      });
      res.on('error', () => resolve(null));
    });
    // Never answered within the client's patience: give up, as a real client would.
    const timer = setTimeout(() => {
      req.destroy();
      resolve(null);
    }, timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    req.end(body);
  });
}

/** The key's credits plus its free calls left, from GET /v1.0/account: what a removal's charge comes out of. */
export async function balance(agent: http.Agent, url: string, key: string): Promise<number> {
  const r = await send(agent, `${url}/v1.0/account`, 'GET', { 'X-Api-Key': key }, undefined, 30_000);
  if (r?.status !== 200) throw new Error(`GET /v1.0/account failed: ${r?.status}`);
  const attrs = (JSON.parse(r.body.toString()) as { data: { attributes: { credits: { total: number }; api: { free_calls: number } } } }).data.attributes;
  return attrs.credits.total + attrs.api.free_calls;
}

/** A Server-Timing header's stages: `queue;dur=1.2, infer;dur=9.8` → { queue: 1.2, infer: 9.8 } (stages without dur are left out). */
export function serverTimings(serverTiming: string | string[] | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of String(serverTiming ?? '').split(',')) {
    const m = /^\s*([^;\s]+)(?:;[^,]*?\bdur=([\d.]+))?/.exec(entry);
    if (m?.[2] !== undefined) out[m[1]!] = Number(m[2]);
  }
  return out;
}

export function queueWait(serverTiming: string | string[] | undefined): number | null {
  return serverTimings(serverTiming).queue ?? null;
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

export function cpuInfo(): SoakReport['cpu'] {
  let flags: string[] = [];
  try {
    const line = /^flags\s*:(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '';
    flags = line
      .trim()
      .split(/\s+/)
      .filter((f) => /^(avx|fma|f16c|amx)/.test(f));
  } catch {
    // not Linux: no flags
  }
  return { model: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism(), flags };
}

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  if (opts.photos.length === 0) throw new Error('runSoak: no photos');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-soak-'));
  const key = cutoutCli(
    [
      'keys',
      'create',
      '--credits',
      String(opts.requests * 2 + 10),
      '--free-calls',
      '0',
      '--concurrency',
      String(opts.concurrency + 4),
      '--rate',
      '1000000000',
      '--label',
      'soak',
    ],
    dataDir,
  );
  const server = await startServer(dataDir, { args: soakServerArgs(opts), ...(opts.env ? { env: opts.env } : {}) });
  const pid = server.child.pid!;
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency + 2 });
  const images = opts.photos.map((f) => fs.readFileSync(f));
  // Built once per photo and size: the client's own work stays off the measured path.
  const bodies = new Map<string, { body: Buffer; type: string }>();
  const records: RequestRecord[] = [];
  const samples: RssSample[] = [];
  let done = 0;
  let t0 = performance.now();
  const sample = () =>
    samples.push({ t: round((performance.now() - t0) / 1000, 2), done, rssMb: round(processMemory(pid).rssMb), faults: processTreeMinorFaults(pid) });
  try {
    const startup = processMemory(pid).rssMb;
    const idle = opts.settleIdle === false ? startup : await settledRss(pid);
    t0 = performance.now();
    const before = await balance(agent, server.url, key);
    sample();
    const sampler = setInterval(sample, 250);
    const budgetEnd = performance.now() + (opts.budgetMs ?? Number.POSITIVE_INFINITY);
    const timeoutMs = opts.clientTimeoutMs ?? 300_000;
    let next = 0;
    const lane = async () => {
      while (next < opts.requests && performance.now() < budgetEnd) {
        const index = next++;
        const p = index % images.length;
        const size = opts.sizes[index % opts.sizes.length]!;
        const bodyKey = `${p}/${size}`;
        let req = bodies.get(bodyKey);
        if (!req) bodies.set(bodyKey, (req = multipartBody(images[p]!, { size, format: 'png' })));
        const { body, type } = req;
        const start = performance.now();
        const r = await send(
          agent,
          `${server.url}/v1.0/removebg`,
          'POST',
          { 'X-Api-Key': key, 'Content-Type': type, 'Content-Length': body.length },
          body,
          timeoutMs,
        );
        const rec: RequestRecord = {
          index,
          photo: path.basename(opts.photos[p]!),
          size,
          status: r?.status ?? 0,
          latencyMs: round(performance.now() - start),
          queueMs: queueWait(r?.headers['server-timing']),
          credits: Number(r?.headers['x-credits-charged'] ?? 0),
          bytes: r?.body.length ?? 0,
        };
        if (r && r.status !== 200) rec.error = r.body.toString('utf8').slice(0, 300);
        records.push(rec);
        done++;
        if (opts.progress && done % Math.max(1, Math.round(opts.requests / 20)) === 0) {
          opts.progress(`  ${done}/${opts.requests} answered=${records.filter((x) => x.status !== 0).length} rss=${round(processMemory(pid).rssMb)} MB`);
        }
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, lane));
    clearInterval(sampler);
    sample();
    const wallS = (performance.now() - t0) / 1000;
    const hwm = processMemory(pid).hwmMb;
    // Idle again: the pool hands its memory back a few seconds after its last answer (src/pool/idle-release.ts).
    const idleAfter = opts.settleIdle === false ? NaN : await rssAfter(pid, IDLE_CHECK_MS);
    const after = await balance(agent, server.url, key);

    const ok = records.filter((r) => r.status === 200);
    const lat = ok.map((r) => r.latencyMs);
    const waits = records.map((r) => r.queueMs).filter((q): q is number => q !== null);
    const services = ok.filter((r) => r.queueMs !== null).map((r) => r.latencyMs - r.queueMs!);
    const statuses: Record<string, number> = {};
    for (const r of records) statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
    const n = records.length;
    const inRange = (lo: number, hi: number) => samples.filter((s) => s.done >= lo && s.done <= hi).map((s) => s.rssMb);
    const secondHalf = samples.filter((s) => s.done >= n / 2);
    const secondTenth = mean(inRange(n / 10, (2 * n) / 10));
    const lastTenth = mean(inRange((9 * n) / 10, n));
    const fromHeaders = records.reduce((a, r) => a + r.credits, 0);
    const p50 = median(lat);
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    const half = secondHalf[0] ?? last;
    const perRequest = (a: RssSample, b: RssSample) => (b.done > a.done ? round((b.faults - a.faults) / (b.done - a.done)) : 0);
    return {
      requests: opts.requests,
      concurrency: opts.concurrency,
      workers: opts.workers ?? 1,
      model: opts.model ?? '(default)',
      sizes: opts.sizes,
      photos: opts.photos.length,
      answered: records.filter((r) => r.status !== 0).length,
      unanswered: records.filter((r) => r.status === 0).length + (opts.requests - n),
      statuses,
      wallS: round(wallS, 2),
      imagesPerS: round(ok.length / wallS, 3),
      latencyMs: { p50: round(p50), p99: round(quantile(lat, 0.99)), max: round(Math.max(0, ...lat)), maxOverP50: round(Math.max(0, ...lat) / (p50 || 1), 2) },
      queueWaitMs: { p50: round(median(waits)), max: round(Math.max(0, ...waits)), reported: waits.length },
      serviceMs: { p50: round(median(services)), max: round(Math.max(0, ...services)) },
      credits: { fromHeaders, ledgerDelta: before - after, exact: fromHeaders === before - after },
      faultsPerRequest: { all: perRequest(first, last), secondHalf: perRequest(half, last) },
      rssMb: {
        idleAfter5s: round(idleAfter),
        startup: round(startup),
        idle: round(idle),
        peak: round(Math.max(...samples.map((s) => s.rssMb))),
        hwm: round(hwm),
        secondTenth: round(secondTenth),
        lastTenth: round(lastTenth),
        growthPct: round(secondTenth ? ((lastTenth - secondTenth) / secondTenth) * 100 : 0, 2),
        growthPerRequestMb: round(
          slope(
            secondHalf.map((s) => s.done),
            secondHalf.map((s) => s.rssMb),
          ),
          4,
        ),
      },
      non200: records.filter((r) => r.status !== 200),
      samples,
      cpu: cpuInfo(),
    };
  } finally {
    agent.destroy();
    await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
