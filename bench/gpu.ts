// bench:gpu: the service end to end on each device, side by side. For each device of --devices
// (default cuda,cpu) ONE `cutout serve` child process (this process is only the client), real
// photos of about 0.5, 4, 12 and 20 MP, size=full, PNG out, at concurrency 1, 8, 32 and 128:
// images/s, p50/p99 latency, errors and statuses, the median of every Server-Timing stage, the GPU's
// busy % and memory (nvidia-smi sampled every 200 ms while a level runs; null without it) and the
// client's own CPU use. A device whose server cannot start is reported as skipped with the server's
// reason. Writes bench/results/gpu.json and gpu.md after every level (a run cut short keeps what it
// measured) and prints the table at the end. docs/gpu.md says what each figure means.
//
//   npm run bench:gpu [-- options] [-- cutout serve flags, e.g. --max-batch 16]
//     --devices cuda,cpu          devices, each its own server (cuda:N works)
//     --photos 0.5,4,12,20        sizes in MP (bench/photos.ts: sizedBenchPhotos; e.g. 1 or 8 are made)
//     --concurrency 1,8,32,128    requests in flight per level
//     --requests-per-level N      requests per level (default max(3 × c, 24); never fewer than c)
//     --level-seconds S           stop starting requests after S seconds (default 60)
//     --drain-seconds S           then abort what is still unanswered after S more (default 60)
//     --warmup N                  uncounted sequential requests per photo and device (default 2)
//     --deadline-seconds S        start no level after S seconds in all (default none)
//     --out DIR                   results folder (default bench/results)
//     --list-photos               make/find the photos, print their paths and exit
//
// The client stays out of the way: each multipart body is built once per photo and shared by every
// request, sockets are kept alive (one per lane), and 200 bodies are counted, never kept. Its CPU
// use per level is in the results (clientCpuPct, % of one core) so a saturated client shows.

import { spawn, spawnSync } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { multipartBody } from '../test/harness/multipart.js';
import { sizedBenchPhotos, type SizedPhoto } from './photos.js';
import { reapWithBench } from '../test/harness/server-reaper.js';
import { cpuInfo, cutoutCli, processTreeRssMb, send, serverTimings, startServer, stopServer, type Server } from '../test/harness/soak-driver.js';
import { markdownTable, median, quantile } from '../test/harness/stats.js';

interface Options {
  devices: string[];
  photos: string[];
  concurrency: number[];
  requestsPerLevel: number | undefined;
  levelSeconds: number;
  drainSeconds: number;
  warmup: number;
  deadlineSeconds: number | undefined;
  out: string;
  serverArgs: string[];
  listPhotos: boolean;
}

interface GpuSample {
  busyPct: number | null;
  memUsedMb: number | null;
  samples: number;
}

interface LevelReport {
  photo: string;
  size: string;
  megapixels: number;
  concurrency: number;
  requests: number;
  /** Requests started (fewer than `requests` when the level's time ran out). */
  started: number;
  ok: number;
  /** Answered with another status than 200. */
  errors: number;
  /** Not answered before the level's end (aborted by the client). */
  unanswered: number;
  statuses: Record<string, number>;
  wallS: number;
  imagesPerS: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** Median of each Server-Timing stage over the 200s, ms (`batch` is the bucket size, not ms). */
  stagesMs: Record<string, number>;
  /** Mean utilization.gpu and peak memory.used while the level ran; null where nvidia-smi is absent. */
  gpu: GpuSample | null;
  /** This client process's CPU time over the level, % of one core. */
  clientCpuPct: number;
  serverRssMb: number;
  /** Response bytes per 200 (median). */
  responseBytes: number;
  /** First bodies of non-200 answers, to see why. */
  errorSamples: string[];
}

interface DeviceReport {
  device: string;
  status: 'ok' | 'skipped';
  /** Why a device was skipped (the server's own words), or why levels were left out. */
  reason?: string;
  /** `device: cuda:0 (…) (…); model …; batches of up to 8 …`, as `cutout serve` printed it. */
  startupLine?: string;
  startupMs?: number;
  serverArgs: string[];
  levels: LevelReport[];
  skippedLevels: string[];
}

interface Report {
  startedAt: string;
  host: {
    cpu: { model: string; cores: number; flags: string[] };
    gpus: string[] | null;
    node: string;
    memGb: number;
  };
  options: Omit<Options, 'listPhotos' | 'out'>;
  photos: Array<{ name: string; size: string; width: number; height: number; megapixels: number; bytes: number }>;
  devices: DeviceReport[];
}

const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const list = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

function positiveInt(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`Expected a positive integer for --${name} but received '${v}'`);
  return n;
}

function positiveNumber(name: string, v: string): number {
  const n = Number(v);
  if (!(n > 0)) throw new Error(`Expected a positive number for --${name} but received '${v}'`);
  return n;
}

function parseOptions(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      devices: { type: 'string', default: 'cuda,cpu' },
      photos: { type: 'string', default: '0.5,4,12,20' },
      concurrency: { type: 'string', default: '1,8,32,128' },
      'requests-per-level': { type: 'string' },
      'level-seconds': { type: 'string', default: '60' },
      'drain-seconds': { type: 'string', default: '60' },
      warmup: { type: 'string', default: '2' },
      'deadline-seconds': { type: 'string' },
      out: { type: 'string', default: path.join(PACKAGE_ROOT, 'bench', 'results') },
      'list-photos': { type: 'boolean', default: false },
    },
  });
  const warmup = Number(values.warmup);
  if (!Number.isInteger(warmup) || warmup < 0) throw new Error(`Expected a whole number for --warmup but received '${values.warmup}'`);
  return {
    devices: list(values.devices),
    photos: list(values.photos),
    concurrency: list(values.concurrency).map((c) => positiveInt('concurrency', c)),
    requestsPerLevel: values['requests-per-level'] === undefined ? undefined : positiveInt('requests-per-level', values['requests-per-level']),
    levelSeconds: positiveNumber('level-seconds', values['level-seconds']),
    drainSeconds: positiveNumber('drain-seconds', values['drain-seconds']),
    warmup,
    deadlineSeconds: values['deadline-seconds'] === undefined ? undefined : positiveNumber('deadline-seconds', values['deadline-seconds']),
    out: path.resolve(values.out),
    serverArgs: positionals,
    listPhotos: values['list-photos'],
  };
}

/** Requests in a level: the flag, else max(3 × c, 24); never fewer than one per lane. */
function levelRequests(concurrency: number, flag: number | undefined): number {
  return Math.max(concurrency, flag ?? Math.max(3 * concurrency, 24));
}

/** `nvidia-smi -L` lines, or null where there is no nvidia-smi (or it fails). */
function gpuNames(): string[] | null {
  const r = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0 || !r.stdout) return null;
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * Samples utilization.gpu and memory.used every 200 ms until stopped. Without nvidia-smi (or when
 * it prints nothing) the result is null.
 */
function startGpuSampler(): { stop(): Promise<GpuSample | null> } {
  const util: number[] = [];
  const mem: number[] = [];
  let failed = false;
  let rest = '';
  const child = spawn('nvidia-smi', ['--query-gpu=utilization.gpu,memory.used', '--format=csv,noheader,nounits', '-lms', '200'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  reapWithBench(child);
  child.on('error', () => (failed = true));
  child.stdout.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      // One line per GPU per tick; with several GPUs the mean is over all of them.
      const [u, m] = line.split(',').map((x) => Number(x.trim()));
      if (Number.isFinite(u) && Number.isFinite(m)) {
        util.push(u!);
        mem.push(m!);
      }
    }
  });
  return {
    async stop() {
      if (child.exitCode === null && !failed) {
        const exited = new Promise<void>((r) => child.once('close', () => r()));
        child.kill('SIGTERM');
        await exited;
      }
      if (failed || util.length === 0) return null;
      return { busyPct: round(util.reduce((a, b) => a + b, 0) / util.length), memUsedMb: Math.max(...mem), samples: util.length };
    },
  };
}

/** Server-Timing stages in the order a request goes through them; others after, as they came. */
const STAGE_ORDER = ['queue', 'probe', 'decode', 'batchWait', 'infer', 'batch', 'decodeOutput', 'composite', 'layout', 'background', 'encode', 'total'];
function orderStages(names: string[]): string[] {
  const unique = [...new Set(names)];
  const rank = (s: string) => (STAGE_ORDER.includes(s) ? STAGE_ORDER.indexOf(s) : STAGE_ORDER.length);
  return unique.sort((a, b) => rank(a) - rank(b));
}

interface Target {
  url: string;
  key: string;
  agent: http.Agent;
  pid: number;
}

interface Prepared {
  photo: SizedPhoto;
  body: Buffer;
  headers: Record<string, string | number>;
}

const CLIENT_TIMEOUT_MS = 600_000;

function post(t: Target, p: Prepared, signal?: AbortSignal) {
  return send(t.agent, `${t.url}/v1.0/removebg`, 'POST', { ...p.headers, 'X-Api-Key': t.key }, p.body, CLIENT_TIMEOUT_MS, {
    ...(signal ? { signal } : {}),
    keepBody: (status) => status !== 200,
  });
}

async function runLevel(t: Target, p: Prepared, concurrency: number, requests: number, opts: Options): Promise<LevelReport> {
  interface Rec {
    status: number;
    latencyMs: number;
    stages: Record<string, number>;
    bytes: number;
    error?: string;
  }
  const records: Rec[] = [];
  const gpu = startGpuSampler();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const stopStarting = t0 + opts.levelSeconds * 1000;
  const abort = new AbortController();
  // One listener per request in flight on this signal: `concurrency` of them, past Node's warning at 10.
  // A request answered at once (503) may leave its listener a moment longer than it is in flight
  // (the H200's 12 MP c = 128 level warned at 137), hence the headroom.
  setMaxListeners(4 * concurrency + 8, abort.signal);
  const hardStop = setTimeout(() => abort.abort(), (opts.levelSeconds + opts.drainSeconds) * 1000);
  let started = 0;
  const lane = async () => {
    while (started < requests && performance.now() < stopStarting && !abort.signal.aborted) {
      started++;
      const start = performance.now();
      const r = await post(t, p, abort.signal);
      const rec: Rec = {
        status: r?.status ?? 0,
        latencyMs: performance.now() - start,
        stages: r ? serverTimings(r.headers['server-timing']) : {},
        bytes: r?.bytes ?? 0,
      };
      if (r && r.status !== 200) rec.error = r.body.toString('utf8').slice(0, 200);
      records.push(rec);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  clearTimeout(hardStop);
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const gpuSample = await gpu.stop();

  const ok = records.filter((r) => r.status === 200);
  const lat = ok.map((r) => r.latencyMs);
  const statuses: Record<string, number> = {};
  for (const r of records) statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
  const stageNames = orderStages(ok.flatMap((r) => Object.keys(r.stages)));
  const stagesMs: Record<string, number> = {};
  for (const k of stageNames) stagesMs[k] = round(median(ok.map((r) => r.stages[k]).filter((v): v is number => v !== undefined)));
  const unanswered = records.filter((r) => r.status === 0).length;

  // Aborted requests may still be running on the server: one more request, alone, waits behind
  // them (every queue is FIFO), so the next level starts on an idle server.
  if (unanswered > 0) await post(t, p);

  return {
    photo: p.photo.name,
    size: p.photo.size,
    megapixels: round((p.photo.width * p.photo.height) / 1e6, 2),
    concurrency,
    requests,
    started,
    ok: ok.length,
    errors: records.filter((r) => r.status !== 200 && r.status !== 0).length,
    unanswered,
    statuses,
    wallS: round(wallS, 2),
    imagesPerS: round(ok.length / wallS, 2),
    latencyMs: { p50: round(median(lat)), p99: round(quantile(lat, 0.99)), max: round(Math.max(0, ...lat)) },
    stagesMs,
    gpu: gpuSample,
    clientCpuPct: round(((cpu.user + cpu.system) / 1000 / (wallS * 1000)) * 100),
    serverRssMb: round(processTreeRssMb(t.pid)),
    responseBytes: Math.round(median(ok.map((r) => r.bytes))) || 0,
    errorSamples: [...new Set(records.filter((r) => r.error).map((r) => `${r.status} ${r.error}`))].slice(0, 3),
  };
}

/** The server's own reason from a start failure (its "failed to start" line, else its stderr). */
function startFailure(err: Error): string {
  const m = /cutout serve: (?:failed to start: )?(.+)/.exec(err.message);
  return (m?.[1] ?? err.message).trim().slice(0, 600);
}

/** `cutout serve` flags for the bench: a queue deep enough for the highest concurrency, unless the caller set one. */
function benchServerArgs(device: string, maxConcurrency: number, extra: string[]): string[] {
  const args = ['--device', device];
  if (!extra.some((a) => a === '--max-queue' || a.startsWith('--max-queue='))) args.push('--max-queue', String(Math.max(64, 2 * maxConcurrency)));
  return [...args, ...extra];
}

async function runDevice(device: string, prepared: Prepared[], opts: Options, report: Report, save: () => void, deadline: number): Promise<void> {
  const maxC = Math.max(...opts.concurrency);
  const serverArgs = benchServerArgs(device, maxC, opts.serverArgs);
  const dev: DeviceReport = { device, status: 'ok', serverArgs, levels: [], skippedLevels: [] };
  report.devices.push(dev);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-bench-gpu-'));
  let server: Server | undefined;
  try {
    const perPhoto = opts.warmup + 1 + opts.concurrency.reduce((a, c) => a + levelRequests(c, opts.requestsPerLevel) + 1, 0);
    const key = cutoutCli(
      [
        'keys',
        'create',
        '--credits',
        String(prepared.length * perPhoto * 2 + 100),
        '--free-calls',
        '0',
        '--concurrency',
        String(maxC + 8),
        '--rate',
        '1000000000',
        '--label',
        'bench-gpu',
      ],
      dataDir,
    );
    const t0 = performance.now();
    try {
      server = await startServer(dataDir, { args: serverArgs });
    } catch (err) {
      dev.status = 'skipped';
      dev.reason = startFailure(err as Error);
      console.error(`bench:gpu: ${device} skipped: ${dev.reason}`);
      save();
      return;
    }
    dev.startupMs = Math.round(performance.now() - t0);
    dev.startupLine = server.startup.find((l) => l.startsWith('device:')) ?? server.startup.join(' ');
    console.error(`bench:gpu: ${device}: ${dev.startupLine} (listening after ${(dev.startupMs / 1000).toFixed(1)} s)`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: maxC + 4 });
    const target: Target = { url: server.url, key, agent, pid: server.child.pid! };
    try {
      for (const p of prepared) {
        for (let i = 0; i < opts.warmup; i++) await post(target, p);
        for (const c of opts.concurrency) {
          if (performance.now() > deadline) {
            dev.skippedLevels.push(`${p.photo.name} c=${c}`);
            continue;
          }
          const level = await runLevel(target, p, c, levelRequests(c, opts.requestsPerLevel), opts);
          dev.levels.push(level);
          const gpuText = level.gpu ? `, GPU ${level.gpu.busyPct}% ${level.gpu.memUsedMb} MiB` : '';
          console.error(
            `  ${device} ${p.photo.name} c=${c}: ${level.imagesPerS} img/s, p50 ${level.latencyMs.p50} ms, p99 ${level.latencyMs.p99} ms, ` +
              `${level.ok}/${level.started} ok${level.errors ? `, ${level.errors} errors` : ''}${level.unanswered ? `, ${level.unanswered} unanswered` : ''}${gpuText}, client CPU ${level.clientCpuPct}%`,
          );
          save();
        }
      }
      if (dev.skippedLevels.length) dev.reason = `deadline of ${opts.deadlineSeconds} s reached: ${dev.skippedLevels.length} level(s) not run`;
    } finally {
      agent.destroy();
    }
  } finally {
    if (server) await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
    save();
  }
}

/** The side-by-side table, then one Server-Timing table per device. */
function renderMarkdown(report: Report): string {
  const out: string[] = [];
  const { cpu, gpus, node, memGb } = report.host;
  out.push(`# bench:gpu, ${report.startedAt}`, '');
  out.push(`- CPU: ${cpu.model}, ${cpu.cores} cores, ${memGb} GiB; flags: ${cpu.flags.join(' ') || 'none'}`);
  out.push(`- GPU: ${gpus?.join('; ') ?? 'none (no nvidia-smi)'}`);
  out.push(
    `- Node ${node}; size=full, PNG; requests per level ${report.options.requestsPerLevel ?? 'max(3 × c, 24)'}, level ≤ ${report.options.levelSeconds} s (+${report.options.drainSeconds} s drain)`,
  );
  for (const d of report.devices) {
    out.push(
      d.status === 'ok'
        ? `- **${d.device}**: \`${d.startupLine}\` (listening after ${((d.startupMs ?? 0) / 1000).toFixed(1)} s)`
        : `- **${d.device}**: skipped: ${d.reason}`,
    );
    if (d.status === 'ok' && d.reason) out.push(`  - ${d.reason}`);
  }
  out.push('');
  const ran = report.devices.filter((d) => d.status === 'ok' && d.levels.length > 0);
  const keys: Array<{ photo: string; size: string; mp: number; c: number }> = [];
  for (const d of ran)
    for (const l of d.levels)
      if (!keys.some((k) => k.photo === l.photo && k.c === l.concurrency)) keys.push({ photo: l.photo, size: l.size, mp: l.megapixels, c: l.concurrency });
  if (keys.length > 0) {
    const header = ['photo', 'MP', 'c'];
    for (const d of ran) header.push(`${d.device} img/s`, `${d.device} p50 ms`, `${d.device} p99 ms`, `${d.device} err`, `${d.device} GPU %`);
    const rows = keys.map((k) => {
      const row: (string | number)[] = [k.photo, k.mp, k.c];
      for (const d of ran) {
        const l = d.levels.find((x) => x.photo === k.photo && x.concurrency === k.c);
        if (!l) row.push('', '', '', '', '');
        else {
          const bad = l.errors + l.unanswered;
          const err =
            bad === 0
              ? '0'
              : Object.entries(l.statuses)
                  .filter(([s]) => s !== '200')
                  .map(([s, n]) => `${n}×${s === '0' ? 'none' : s}`)
                  .join(' ');
          row.push(l.imagesPerS, l.latencyMs.p50, l.latencyMs.p99, err, l.gpu?.busyPct ?? '–');
        }
      }
      return row;
    });
    out.push(markdownTable(header, rows), '');
  }
  for (const d of ran) {
    const stages = orderStages(d.levels.flatMap((l) => Object.keys(l.stagesMs)));
    out.push(`Server-Timing medians on ${d.device}, ms (batch: bucket size):`, '');
    out.push(
      markdownTable(
        ['photo', 'c', ...stages, 'client CPU %', 'server RSS MB'],
        d.levels.map((l) => [l.photo, l.concurrency, ...stages.map((s) => l.stagesMs[s] ?? ''), l.clientCpuPct, l.serverRssMb]),
      ),
      '',
    );
  }
  return out.join('\n');
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const photos = await sizedBenchPhotos(opts.photos);
  if (opts.listPhotos) {
    for (const p of photos) console.log(p.file);
    return;
  }
  const t0 = performance.now();
  const deadline = opts.deadlineSeconds === undefined ? Number.POSITIVE_INFINITY : t0 + opts.deadlineSeconds * 1000;
  const prepared: Prepared[] = photos.map((photo) => {
    const { body, type } = multipartBody(fs.readFileSync(photo.file), { size: 'full', format: 'png' });
    return { photo, body, headers: { 'Content-Type': type, 'Content-Length': body.length } };
  });
  const { listPhotos: _l, out: _o, ...shown } = opts;
  const report: Report = {
    startedAt: new Date().toISOString(),
    host: { cpu: cpuInfo(), gpus: gpuNames(), node: process.version, memGb: round(os.totalmem() / 2 ** 30) },
    options: shown,
    photos: prepared.map(({ photo, body }) => ({
      name: photo.name,
      size: photo.size,
      width: photo.width,
      height: photo.height,
      megapixels: round((photo.width * photo.height) / 1e6, 2),
      bytes: body.length,
    })),
    devices: [],
  };
  fs.mkdirSync(opts.out, { recursive: true });
  const save = () => {
    fs.writeFileSync(path.join(opts.out, 'gpu.json'), `${JSON.stringify(report, null, 2)}\n`);
    fs.writeFileSync(path.join(opts.out, 'gpu.md'), `${renderMarkdown(report)}\n`);
  };
  console.error(
    `bench:gpu: devices ${opts.devices.join(', ')}; photos ${photos.map((p) => `${p.name} (${round((p.width * p.height) / 1e6, 2)} MP)`).join(', ')}; concurrency ${opts.concurrency.join(', ')}`,
  );
  for (const device of opts.devices) {
    if (performance.now() > deadline) {
      report.devices.push({
        device,
        status: 'skipped',
        reason: `deadline of ${opts.deadlineSeconds} s reached before it started`,
        serverArgs: [],
        levels: [],
        skippedLevels: [],
      });
      continue;
    }
    await runDevice(device, prepared, opts, report, save, deadline);
  }
  save();
  console.log(renderMarkdown(report));
  console.error(`bench:gpu: wrote ${path.join(opts.out, 'gpu.json')} and gpu.md (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
