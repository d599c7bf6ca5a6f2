// Memory footprint of the real commands, each in its own process (docs/memory.md):
//   1. `cutout remove <photo> --size full` on a small photo and on the 20 MP camera JPEG: peak RSS;
//   2. `cutout serve --workers N` (default 1): RSS when idle after start, then N removals at concurrency C over a
//      mix of photos and sizes (preview and full): peak RSS (VmHWM), RSS every tenth of the run, and
//      RSS once idle again.
// RSS is read from /proc/PID/status (VmRSS, VmHWM) every 10 ms. Prints a table; writes
// bench/results/memory.json.
//
//   node dist/bench/memory.js [--model NAME] [--requests N] [--concurrency C] [--workers N] [--skip-cli] [--skip-serve]

import { launchEnv } from '../src/process/launch-env.js';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { openLmdbLedger } from '../src/ledger/lmdb-ledger.js';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { benchPhotos } from './photos.js';
import { markdownTable, median } from '../test/harness/stats.js';
import { multipartBody } from '../test/harness/multipart.js';
import { reapWithBench } from '../test/harness/server-reaper.js';
import { settledRss } from '../test/harness/soak-driver.js';

const CLI = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const MODEL = flag('model');
const REQUESTS = Number(flag('requests') ?? '30');
const CONCURRENCY = Number(flag('concurrency') ?? '4');
const WORKERS = Number(flag('workers') ?? '1');

interface Mem {
  rssMb: number;
  hwmMb: number;
}

function readMem(pid: number): Mem | undefined {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Polls a child's memory until it exits; resolves with its last peak and exit code. */
function watch(child: ChildProcess): { done: Promise<{ code: number | null; hwmMb: number }>; last: () => Mem | undefined } {
  let last: Mem | undefined;
  const timer = setInterval(() => {
    const m = readMem(child.pid!);
    // A process that has exited (a zombie) has no Vm* lines any more.
    if (m && Number.isFinite(m.hwmMb)) last = m;
  }, 10);
  const done = new Promise<{ code: number | null; hwmMb: number }>((resolve) => {
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve({ code, hwmMb: last?.hwmMb ?? NaN });
    });
  });
  return { done, last: () => last };
}

async function removePeak(file: string): Promise<{ hwmMb: number; seconds: number }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-bench-memory-out-'));
  const args = [CLI, 'remove', file, '--size', 'full', '-o', out, ...(MODEL ? ['--model', MODEL] : [])];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: launchEnv() });
  reapWithBench(child);
  const { code, hwmMb } = await watch(child).done;
  fs.rmSync(out, { recursive: true, force: true });
  if (code !== 0) throw new Error(`cutout remove ${file} exited with ${code}`);
  return { hwmMb, seconds: (performance.now() - t0) / 1000 };
}

function post(agent: http.Agent, url: string, key: string, b: { body: Buffer; type: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'X-Api-Key': key, 'Content-Type': b.type, 'Content-Length': b.body.length } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(b.body);
  });
}

async function serveSoak(photos: Array<{ name: string; file: string }>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-bench-memory-'));
  const ledger = openLmdbLedger(dataDir);
  const key = ledger.createAccount({ label: 'bench', subscription: 10_000_000, concurrency: 1_000, ratePerMinute: 1_000_000_000 }).apiKey;
  await ledger.close();

  const args = [
    CLI,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--data',
    dataDir,
    '--workers',
    String(WORKERS),
    '--no-demo-key',
    ...(MODEL ? ['--model', MODEL] : []),
  ];
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: launchEnv(),
  });
  reapWithBench(child);
  const w = watch(child);
  let banner = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      banner += c.toString();
      const m = /cutout listening on (\S+)/.exec(banner);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`cutout serve exited with ${code}: ${banner}`)));
  });
  const startupMb = readMem(child.pid!)!.rssMb;
  const idleMb = await settledRss(child.pid!);
  const estimate = /memory: (.*)/.exec(banner)?.[1];

  const mix = photos.flatMap((p) => ['full', 'preview'].map((size) => ({ label: `${p.name}/${size}`, ...multipartBody(fs.readFileSync(p.file), { size }) })));
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const checkpoints: number[] = [];
  const latencies: number[] = [];
  let next = 0;
  let done = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        // Photo i mod n and size i mod 2 (n is odd: every photo at both sizes).
        const m = mix[(i % photos.length) * 2 + (i % 2)]!;
        const s = performance.now();
        const status = await post(agent, `${url}/v1.0/removebg`, key, m).catch(() => 0);
        latencies.push(performance.now() - s);
        if (status !== 200) errors++;
        done++;
        if (done % Math.max(1, Math.round(REQUESTS / 10)) === 0) checkpoints.push(Math.round(readMem(child.pid!)!.rssMb));
      }
    }),
  );
  const wallS = (performance.now() - t0) / 1000;
  agent.destroy();
  const idleAfterMb = await settledRss(child.pid!);
  const after = readMem(child.pid!)!;
  child.kill('SIGTERM');
  await w.done;
  fs.rmSync(dataDir, { recursive: true, force: true });
  return {
    startupMb,
    idleMb,
    estimate,
    peakMb: after.hwmMb,
    rssCheckpointsMb: checkpoints,
    idleAfterMb,
    requests: done,
    errors,
    concurrency: CONCURRENCY,
    medianLatencyMs: median(latencies),
    wallSeconds: wallS,
    mix: mix.map((m) => m.label),
  };
}

async function main(): Promise<void> {
  const photos = await benchPhotos();
  const small = photos.find((p) => p.name.startsWith('dev-'));
  const big = photos.find((p) => p.name === 'nuthatch-20mp');
  const result: Record<string, unknown> = { model: MODEL ?? '(manifest default)', workers: WORKERS, cpus: os.cpus().length, node: process.version };
  if (!process.argv.includes('--skip-cli')) {
    if (small) result.removeSmall = { photo: small.name, ...(await removePeak(small.file)) };
    if (big) result.remove20mp = { photo: big.name, ...(await removePeak(big.file)) };
  }
  if (!process.argv.includes('--skip-serve')) result.serve = await serveSoak(photos);
  const rows: (string | number)[][] = [];
  const r = result as { removeSmall?: { hwmMb: number }; remove20mp?: { hwmMb: number }; serve?: Awaited<ReturnType<typeof serveSoak>> };
  if (r.removeSmall) rows.push(['cutout remove, small photo, full: peak', r.removeSmall.hwmMb.toFixed(0)]);
  if (r.remove20mp) rows.push(['cutout remove, 20 MP photo, full: peak', r.remove20mp.hwmMb.toFixed(0)]);
  if (r.serve) {
    rows.push([`cutout serve --workers ${WORKERS}: as it listens`, r.serve.startupMb.toFixed(0)]);
    rows.push([`cutout serve --workers ${WORKERS}: idle (settled)`, r.serve.idleMb.toFixed(0)]);
    rows.push([`serve: peak over ${r.serve.requests} requests at concurrency ${r.serve.concurrency} (${r.serve.errors} errors)`, r.serve.peakMb.toFixed(0)]);
    rows.push(['serve: RSS at each tenth of the run', r.serve.rssCheckpointsMb.join(' ')]);
    rows.push(['serve: idle again after the run (settled)', r.serve.idleAfterMb.toFixed(0)]);
  }
  console.log(markdownTable(['model ' + String(result.model), 'MB'], rows));
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'memory.json'), JSON.stringify(result, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
