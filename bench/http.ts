// HTTP benchmark: the real service (uWS + real pool) on loopback, driven by a concurrent client at
// concurrencies 1, 2, 4, 16 over the shared bench photos, plus GET /v1.0/account requests/s.
// Writes bench/results/http.json and bench/results/http.md. Bounded: fixed request counts and a
// per-level time budget. The ledger is the real LMDB one in a temporary folder, with an account
// generous enough that credits, slots and rate limits never refuse a request.
//
//   npm run bench:http            BENCH_HTTP_SCALE=0.5 (fewer requests)  BENCH_HTTP_SIZE=preview|full

import fs from 'node:fs';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { apiFactory } from '../src/api/routes.js';
import { createServer } from '../src/http/server.js';
import { openLmdbBackend } from '../src/ledger/lmdb-backend.js';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { createRemovalPool } from '../src/pool/pool.js';
import { multipartBody } from '../test/harness/multipart.js';
import { benchPhotos } from './photos.js';
import { markdownTable, median, quantile } from '../test/harness/stats.js';

const SCALE = Number(process.env.BENCH_HTTP_SCALE ?? '1');
const SIZE = process.env.BENCH_HTTP_SIZE ?? 'full';
const LEVEL_BUDGET_MS = Number(process.env.BENCH_HTTP_LEVEL_SECONDS ?? '120') * 1000;
const LEVELS: Array<{ concurrency: number; requests: number }> = [
  { concurrency: 1, requests: 6 },
  { concurrency: 2, requests: 8 },
  { concurrency: 4, requests: 12 },
  { concurrency: 16, requests: 32 },
].map((l) => ({ ...l, requests: Math.max(l.concurrency, Math.round(l.requests * SCALE)) }));
// BENCH_HTTP_ACCOUNT_ONLY=1: skip the image levels (quick check of the HTTP + ledger path).
const ACCOUNT_ONLY = process.env.BENCH_HTTP_ACCOUNT_ONLY === '1';
const ACCOUNT_REQUESTS = Math.round(200_000 * SCALE);

function send(
  agent: http.Agent,
  url: string,
  method: string,
  headers: Record<string, string | number>,
  body?: Buffer,
): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Run `total` jobs with at most `concurrency` at once; stop starting new ones after the budget. */
async function drive(concurrency: number, total: number, budgetMs: number, job: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const deadline = performance.now() + budgetMs;
  const lanes = Array.from({ length: concurrency }, async () => {
    while (next < total && performance.now() < deadline) await job(next++);
  });
  await Promise.all(lanes);
  return next;
}

async function main(): Promise<void> {
  const photos = await benchPhotos();
  if (photos.length === 0) throw new Error('no bench photos found');
  const images = photos.map((p) => ({ name: p.name, bytes: fs.readFileSync(p.file) }));
  const bodies = images.map((img) => multipartBody(img.bytes, { size: SIZE }));

  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-bench-http-'));
  const ledger = openLmdbBackend(path.join(ledgerDir, 'ledger'));
  const KEY = (await ledger.createAccount({ label: 'bench', subscription: 1_000_000, concurrency: 1_000, ratePerMinute: 1_000_000_000 })).apiKey;

  const started = performance.now();
  const pool = await createRemovalPool({ maxQueue: 64 });
  const poolStartMs = performance.now() - started;
  const config = Object.freeze({ ...loadConfig([], {}), host: '127.0.0.1', port: 0, demoKey: false });
  const server = createServer({ config, api: apiFactory({ config, pool, ledger }), log: { info() {}, error: (m, e) => console.error(m, e) } });
  await server.listen();
  const base = server.url;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  console.error(`bench:http: ${base}, ${pool.stats().workers} worker(s), photos: ${images.map((i) => i.name).join(', ')}, size=${SIZE}`);

  // Warm-up: the first runs of a fresh session are slow (NOTES-ENV).
  for (let i = 0; i < (ACCOUNT_ONLY ? 0 : 2); i++) {
    const b = bodies[0]!;
    await send(agent, `${base}/v1.0/removebg`, 'POST', { 'X-Api-Key': KEY, 'Content-Type': b.type, 'Content-Length': b.body.length }, b.body);
  }

  const levels: Array<Record<string, number>> = [];
  for (const { concurrency, requests } of ACCOUNT_ONLY ? [] : LEVELS) {
    const latencies: number[] = [];
    let errors = 0;
    const t0 = performance.now();
    const done = await drive(concurrency, requests, LEVEL_BUDGET_MS, async (i) => {
      const b = bodies[i % bodies.length]!;
      const s = performance.now();
      try {
        const r = await send(agent, `${base}/v1.0/removebg`, 'POST', { 'X-Api-Key': KEY, 'Content-Type': b.type, 'Content-Length': b.body.length }, b.body);
        if (r.status !== 200) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - s);
    });
    const wallS = (performance.now() - t0) / 1000;
    const row = {
      concurrency,
      requests: done,
      errors,
      imagesPerSecond: (done - errors) / wallS,
      p50Ms: median(latencies),
      p90Ms: quantile(latencies, 0.9),
      p99Ms: quantile(latencies, 0.99),
      wallSeconds: wallS,
    };
    levels.push(row);
    console.error(`  c=${concurrency}: ${done} req, ${row.imagesPerSecond.toFixed(2)} img/s, p50 ${row.p50Ms.toFixed(0)} ms, errors ${errors}`);
  }

  // GET /v1.0/account: the HTTP + auth + balances path without inference, driven from a separate
  // process with pipelined keep-alive connections (an in-process client would measure itself).
  const port = new URL(base).port;
  const client = path.join(path.dirname(fileURLToPath(import.meta.url)), 'pipelined-get.js');
  const accountRun = await new Promise<{ requestsPerSecond: number; errors: number }>((resolve, reject) => {
    execFile(process.execPath, [client, port, '/v1.0/account', KEY, String(ACCOUNT_REQUESTS), '8', '16'], (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout.trim()) as { requestsPerSecond: number; errors: number }),
    );
  });
  const accountRps = accountRun.requestsPerSecond;
  const accountErrors = accountRun.errors;

  agent.destroy();
  await server.close();
  await pool.close();
  await ledger.close();
  fs.rmSync(ledgerDir, { recursive: true, force: true });

  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    workers: pool.stats().workers,
    size: SIZE,
    photos: images.map((i) => ({ name: i.name, bytes: i.bytes.length })),
    poolStartMs,
    levels,
    account: { requests: ACCOUNT_REQUESTS, connections: 8, pipelineDepth: 16, requestsPerSecond: accountRps, errors: accountErrors },
    peakRssMb,
    note: 'Client and server share one process (peak RSS includes the client). Ledger: LMDB (relaxed durability) in a temp folder.',
  };
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'http.json'), `${JSON.stringify(result, null, 2)}\n`);
  const table = markdownTable(
    ['concurrency', 'requests', 'images/s', 'p50 ms', 'p90 ms', 'p99 ms', 'errors'],
    levels.map((l) => [l.concurrency!, l.requests!, l.imagesPerSecond!.toFixed(2), l.p50Ms!.toFixed(0), l.p90Ms!.toFixed(0), l.p99Ms!.toFixed(0), l.errors!]),
  );
  const md = `# bench:http (${result.date})\n\n${result.cpus} CPUs (${result.cpuModel}), ${result.workers} worker(s), size=${SIZE}, photos: ${images.map((i) => i.name).join(', ')}\n\n${table}\n\nGET /v1.0/account: ${accountRps.toFixed(0)} requests/s (8 connections × 16 pipelined, separate client process; ${accountErrors} errors). Peak RSS ${peakRssMb.toFixed(0)} MB (client + server). Pool start ${poolStartMs.toFixed(0)} ms.\n`;
  fs.writeFileSync(path.join(dir, 'http.md'), md);
  process.stdout.write(md);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
