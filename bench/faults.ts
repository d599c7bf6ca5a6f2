// Fault benchmark: 4 clients send a steady stream of real photos (preview and full
// alternating) on one key (1,000 credits, concurrency cap 4, no free calls) to a real `cutout serve`,
// while faults are injected one at a time:
//   pg-stop       PostgreSQL killed as `pg_ctl stop -m immediate` does, started again 10 s later
//   pg-stall      the postmaster and its backends stopped (SIGSTOP) for 15 s, then continued
//   slow-uploads  4 more uploads on the same key, Content-Length 100000 at 5 bytes a second
//   disk-full     a server on LMDB in a small tmpfs, filled for 10 s (root only: it mounts one)
//   disk-full-sustained  the same, full for 60 s with the ledger's own room used up (bench/fault-disk-full-sustained.ts)
//   memory-limit  a server on its defaults in a cgroup limited to 600 MB, the stream's photos replaced
//                 by 12 MP ones at full size for 30 s (root only: it makes the cgroup); also prints
//                 the cgroup's peak and its OOM kills, and whether the server is still up
//   shutdown      SIGTERM during a 12 MP size=full request, 20 trials (bench/fault-shutdown.ts): its own row
//   many-fields   bodies of a million JSON keys or 300,000 multipart parts, two at a time, keyed and
//                 sandbox, while /healthz is polled every 20 ms (bench/fault-many-fields.ts); no photo stream
//   sandbox-starvation, key-starvation  9 uploads declaring 30 MB at 2 kB per 100 ms, to the sandbox or
//                 on a key capped at 1, while another key sends 10 small removals (bench/fault-starvation.ts)
// Per fault it prints the statuses of the stream's requests (answered from the fault's start to the end of the
// window), cuts (connections closed without an answer), 500s, the credits the 200s announced against the
// balance's fall, the first 200 after the fault ended, and 429s among requests started 5 s or more after
// it (a slot left taken). Writes bench/results/faults.json.
//
//   npm run bench:faults [-- --faults pg-stop,pg-stall,slow-uploads,disk-full,many-fields] [--after-s 20]
//
// Attack runs, each alone and only when named, with their own flags and report (bench/fuzz-*.ts):
//   npm run bench:faults -- --faults fuzz-http [--seconds 120] [--lanes 6] [--seed 1] [--tls] [--ledger URL] [-- <serve flags>]
//   npm run bench:faults -- --faults fuzz-fetch [--seconds 60] [--lanes 8] [--seed 1] [--modes fetcher,service]
//   npm run bench:faults -- --faults fuzz-images [--seconds 120] [--seed 1]

import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { benchPhotos } from './photos.js';
import { formatHealthz, manyFields, type ManyFieldsResult } from './fault-many-fields.js';
import { makeMemoryCgroup } from '../test/harness/memory-cgroup.js';
import { starvation, STARVATION_FAULTS, type StarvationFault } from './fault-starvation.js';
import { errorCodeOf, fillDisk, type StreamRow } from './fault-report.js';
import { multipartBody } from '../test/harness/multipart.js';
import { startPostgresServer, type PostgresServer } from '../test/harness/postgres-server.js';
import { balance, cpuInfo, cutoutCli, send, startServer, stopServer, type Server } from '../test/harness/soak-driver.js';
import { shutdownClean, shutdownFault, shutdownRow, type ShutdownReport } from './fault-shutdown.js';
import { describe as describeDiskFull, diskFullSustained, isBad as diskFullBad, type DiskFullSustained } from './fault-disk-full-sustained.js';

const FAULTS = [
  'pg-stop',
  'pg-stall',
  'slow-uploads',
  'disk-full',
  'memory-limit',
  'disk-full-sustained',
  'shutdown',
  'many-fields',
  ...STARVATION_FAULTS,
] as const;
type Fault = (typeof FAULTS)[number];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const CLIENTS = 4;
const CREDITS = 1000;
/** The stream runs this long before each fault. */
const BEFORE_MS = 5_000;
/** ...and this long after the fault ended (recovery, and slots left taken). */
const AFTER_MS = Number(arg('after-s') ?? 20) * 1000;
/** Slots must be free this long after the fault ended. */
const SLOTS_FREE_MS = 5_000;
const CLIENT_TIMEOUT_MS = 150_000;

interface Sent {
  startMs: number;
  endMs: number;
  status: number;
  code: string;
  credits: number;
}

interface FaultReport extends StreamRow {
  fault: Fault;
  /** The row's name when not the fault's. */
  label?: string;
  shutdown?: ShutdownReport;
  healthz?: ManyFieldsResult['healthz'];
  diskFullSustained?: DiskFullSustained;
}

/** One client's loop of requests on `url` until `stop()` is true. */
async function client(url: string, key: string, bodies: Array<{ body: Buffer; type: string }>, offset: number, log: Sent[], t0: number, stop: () => boolean) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = offset; !stop(); i += CLIENTS) {
    const { body, type } = bodies[i % bodies.length]!;
    const startMs = performance.now() - t0;
    const r = await send(
      agent,
      `${url}/v1.0/removebg`,
      'POST',
      { 'X-Api-Key': key, 'Content-Type': type, 'Content-Length': body.length },
      body,
      CLIENT_TIMEOUT_MS,
      { keepBody: (s) => s !== 200 },
    );
    const code = r && r.status !== 200 ? errorCodeOf(r.body) : '';
    log.push({ startMs, endMs: performance.now() - t0, status: r?.status ?? 0, code, credits: Number(r?.headers['x-credits-charged'] ?? 0) });
    // A refused request comes back at once: pace the retries as a client would.
    if (r?.status !== 200) await sleep(200);
  }
  agent.destroy();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A POST whose body comes at 5 bytes a second; resolves with the status line the server answered, or how it ended. */
function slowUpload(url: string, key: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const socket = net.connect(Number(port), hostname);
    let answer = '';
    const tick = setInterval(() => socket.write('xxxxx'), 1000);
    const done = (how: string) => {
      clearInterval(tick);
      socket.destroy();
      resolve(`${how} after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    };
    socket.on('connect', () =>
      socket.write(
        `POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n`,
      ),
    );
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      const line = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (line) done(line[1]!);
    });
    socket.on('close', () => done('closed without an answer'));
    socket.on('error', () => done('connection error'));
    setTimeout(() => done('still open (client gave up)'), 60_000).unref();
  });
}

function count<T>(xs: T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}

/** The stream against `server` through one fault: `inject` starts it and resolves when it has ended. */
async function underFault(
  fault: Fault,
  server: Server,
  key: string,
  bodies: Array<{ body: Buffer; type: string }>,
  inject: () => Promise<{ extra?: Partial<FaultReport> }>,
): Promise<FaultReport> {
  const agent = new http.Agent({ keepAlive: false });
  const before = await balance(agent, server.url, key);
  const log: Sent[] = [];
  const t0 = performance.now();
  let stopping = false;
  const clients = Array.from({ length: CLIENTS }, (_, i) => client(server.url, key, bodies, i, log, t0, () => stopping));
  await sleep(BEFORE_MS);
  const faultStart = performance.now() - t0;
  const { extra } = await inject();
  const faultEnd = performance.now() - t0;
  await sleep(AFTER_MS);
  stopping = true;
  await Promise.all(clients);
  const after = await balance(agent, server.url, key);
  agent.destroy();

  const window = log.filter((s) => s.endMs >= faultStart);
  const fromHeaders = log.reduce((a, s) => a + (s.status === 200 ? s.credits : 0), 0);
  const firstOk = log.filter((s) => s.status === 200 && s.startMs >= faultEnd).sort((a, b) => a.endMs - b.endMs)[0];
  return {
    fault,
    faultMs: Math.round(faultEnd - faultStart),
    requests: window.length,
    statuses: count(window, (s) => String(s.status)),
    codes: count(
      window.filter((s) => s.code),
      (s) => s.code,
    ),
    cuts: window.filter((s) => s.status === 0).length,
    errors500: window.filter((s) => s.status >= 500 && s.status !== 503).length,
    credits: { fromHeaders, balanceFall: before - after, exact: fromHeaders === before - after },
    firstOkAfterS: firstOk ? Math.round((firstOk.endMs - faultEnd) / 100) / 10 : null,
    late429: log.filter((s) => s.status === 429 && s.startMs >= faultEnd + SLOTS_FREE_MS).length,
    ...extra,
  };
}

async function postgresFaults(faults: Fault[], bodies: Array<{ body: Buffer; type: string }>): Promise<FaultReport[]> {
  // PostgreSQL's own defaults (fsync on): a crash loses only what a real server would.
  const pg: PostgresServer = await startPostgresServer({ throwaway: false });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-faults-'));
  let server: Server | undefined;
  const reports: FaultReport[] = [];
  try {
    const url = await pg.createDatabase('faults');
    const key = cutoutCli(
      [
        'keys',
        'create',
        '--ledger',
        url,
        '--credits',
        String(CREDITS),
        '--free-calls',
        '0',
        '--concurrency',
        String(CLIENTS),
        '--rate',
        '1000000',
        '--label',
        'faults',
      ],
      dataDir,
    );
    server = await startServer(dataDir, { args: ['--workers', '1', '--ledger', url] });
    for (const fault of faults) {
      console.error(`bench:faults: ${fault}…`);
      if (fault === 'pg-stop') {
        reports.push(
          await underFault(fault, server, key, bodies, async () => {
            await pg.crash();
            await sleep(10_000);
            await pg.start();
            return {};
          }),
        );
      } else if (fault === 'pg-stall') {
        reports.push(
          await underFault(fault, server, key, bodies, async () => {
            pg.stall(true);
            await sleep(15_000);
            pg.stall(false);
            return {};
          }),
        );
      } else if (fault === 'slow-uploads') {
        const srv = server;
        reports.push(
          await underFault(fault, server, key, bodies, async () => {
            const slow = await Promise.all(Array.from({ length: CLIENTS }, () => slowUpload(srv.url, key)));
            return { extra: { slowUploads: slow } };
          }),
        );
      }
    }
  } finally {
    if (server && process.env.FAULTS_LOG) fs.writeFileSync(process.env.FAULTS_LOG, server.stderr.join(''));
    if (server) await stopServer(server);
    await pg.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return reports;
}

/** LMDB in a 32 MB tmpfs, filled to the last byte for 10 s. Needs root (mount); skipped with the reason otherwise. */
async function diskFull(bodies: Array<{ body: Buffer; type: string }>): Promise<FaultReport> {
  const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-faults-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mnt], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    fs.rmSync(mnt, { recursive: true, force: true });
    return { fault: 'disk-full', skipped: `cannot mount a tmpfs (${(mounted.stderr || mounted.error?.message || '').trim()}): run as root` };
  }
  const dataDir = path.join(mnt, 'data');
  const filler = path.join(mnt, 'filler');
  let server: Server | undefined;
  try {
    const key = cutoutCli(
      ['keys', 'create', '--credits', String(CREDITS), '--free-calls', '0', '--concurrency', String(CLIENTS), '--rate', '1000000', '--label', 'faults'],
      dataDir,
    );
    server = await startServer(dataDir, { args: ['--workers', '1'] });
    return await underFault('disk-full', server, key, bodies, async () => {
      fillDisk(filler);
      await sleep(10_000);
      fs.rmSync(filler);
      return {};
    });
  } finally {
    if (server) await stopServer(server);
    spawnSync('umount', [mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  }
}

const MEMORY_LIMIT_BYTES = 600 * 1024 * 1024;

/** `cutout serve` on its defaults in a 600 MB cgroup, the stream's photos 12 MP at full size for 30 s. Root only; skipped with the reason otherwise. */
async function memoryLimit(bodies: Array<{ body: Buffer; type: string }>): Promise<FaultReport> {
  const cgroup = makeMemoryCgroup(`cutout-faults-${process.pid}`, MEMORY_LIMIT_BYTES);
  if (typeof cgroup === 'string') return { fault: 'memory-limit', skipped: cgroup };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-faults-mem-'));
  let server: Server | undefined;
  try {
    const key = cutoutCli(
      ['keys', 'create', '--credits', String(CREDITS), '--free-calls', '0', '--concurrency', String(CLIENTS), '--rate', '1000000', '--label', 'faults'],
      dataDir,
    );
    server = await startServer(dataDir, { args: [], cgroupProcs: cgroup.procs });
    const srv = server;
    const report = await underFault('memory-limit', server, key, bodies, async () => {
      await sleep(30_000);
      return {};
    });
    const peak = cgroup.peakBytes();
    report.memory = {
      limitMb: MEMORY_LIMIT_BYTES / 1048576,
      peakMb: peak === undefined ? null : Math.round(peak / 1048576),
      oomKills: cgroup.oomKills(),
      alive: srv.child.exitCode === null && srv.child.signalCode === null,
    };
    return report;
  } finally {
    if (server) await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
    try {
      cgroup.remove();
    } catch {
      // a process still leaving: the kernel removes nothing in use
    }
  }
}

/** Runs the attack run `name` names (its module runs on import); false when it names none. */
async function attackRun(name: string | undefined): Promise<boolean> {
  if (name === 'fuzz-http') await import('./fuzz-http.js');
  else if (name === 'fuzz-fetch') await import('./fuzz-fetch.js');
  else if (name === 'fuzz-images') await import('./fuzz-images.js');
  else return false;
  return true;
}

async function main() {
  if (await attackRun(arg('faults'))) return;
  const faults = (arg('faults') ?? FAULTS.join(',')).split(',').map((f) => f.trim()) as Fault[];
  for (const f of faults) if (!FAULTS.includes(f)) throw new Error(`bench:faults: unknown fault '${f}' (known: ${FAULTS.join(', ')})`);
  const reports: FaultReport[] = [];
  if (faults.includes('many-fields')) {
    console.error('bench:faults: many-fields…');
    reports.push({ fault: 'many-fields', ...(await manyFields()), firstOkAfterS: null, late429: 0 });
  }
  // These faults make their own bodies; the rest stream the bench photos.
  const needsPhotos = faults.some((f) => !['many-fields', 'disk-full-sustained', 'sandbox-starvation', 'key-starvation'].includes(f));
  const photos = needsPhotos ? await benchPhotos() : [];
  const small = photos.find((p) => p.name === 'dev-am_GT04-0.45mp') ?? photos[0];
  const mid = photos.find((p) => p.name === 'ladybird-4mp');
  if (!small && needsPhotos) throw new Error('bench:faults: no photos');
  const bodies = [small, mid]
    .filter((p) => p !== undefined)
    .flatMap((p) => ['preview', 'full'].map((size) => multipartBody(fs.readFileSync(p.file), { size, format: 'png' })));

  const isStarvation = (f: Fault): f is StarvationFault => (STARVATION_FAULTS as readonly string[]).includes(f);
  const pgFaults = faults.filter((f) => !['disk-full', 'memory-limit', 'disk-full-sustained', 'shutdown', 'many-fields'].includes(f) && !isStarvation(f));
  if (pgFaults.length > 0) reports.push(...(await postgresFaults(pgFaults, bodies)));
  if (faults.includes('disk-full')) reports.push(await diskFull(bodies));
  if (faults.includes('disk-full-sustained')) {
    const r = await diskFullSustained(CREDITS, CLIENTS, (server, key, small, inject) => underFault('disk-full-sustained', server, key, small, inject));
    reports.push('skipped' in r ? { fault: 'disk-full-sustained', skipped: r.skipped } : r);
  }
  if (faults.includes('memory-limit')) {
    const large = photos.filter((p) => /12mp|18mp|20mp/.test(p.name));
    if (large.length === 0) reports.push({ fault: 'memory-limit', skipped: 'no 12 MP or larger bench photos' });
    else reports.push(await memoryLimit(large.map((p) => multipartBody(fs.readFileSync(p.file), { size: 'full', format: 'png' }))));
  }
  if (faults.includes('shutdown')) {
    const photo = photos.find((p) => /12mp/.test(p.name));
    reports.push(photo ? { fault: 'shutdown', shutdown: await shutdownFault(photo.file) } : { fault: 'shutdown', skipped: 'no 12 MP bench photo' });
  }
  for (const f of faults.filter(isStarvation)) reports.push(...(await starvation(f)));

  const cpu = cpuInfo();
  console.log(
    `bench:faults, ${CLIENTS} clients on one key (cap ${CLIENTS}, no free calls), photos ${[small, mid]
      .filter(Boolean)
      .map((p) => p!.name)
      .join(', ')}, preview/full; ${cpu.model}, ${cpu.cores} cores, flags ${cpu.flags.join(' ')}`,
  );
  console.log(
    '| fault | requests | statuses | error codes | cuts | 500s | credits: headers / balance fall | first 200 after (s) | 429 ≥5 s after | slow uploads |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of reports) {
    if (r.skipped) {
      console.log(`| ${r.label ?? r.fault} | skipped: ${r.skipped} |`);
      continue;
    }
    if (r.shutdown) {
      console.log(shutdownRow(r.shutdown));
      continue;
    }
    const fmt = (o: Record<string, number> | undefined) =>
      Object.entries(o ?? {})
        .map(([k, v]) => `${k}×${v}`)
        .join(' ') || '-';
    if (r.diskFullSustained) console.error(describeDiskFull(r.diskFullSustained));
    if (r.memory)
      console.error(
        `bench:faults: ${r.label ?? r.fault}: cgroup ${r.memory.limitMb} MB, peak ${r.memory.peakMb ?? '?'} MB, OOM kills ${r.memory.oomKills}, server ${r.memory.alive ? 'up' : 'GONE'}`,
      );
    console.log(
      `| ${r.label ?? r.fault} (${(r.faultMs! / 1000).toFixed(1)} s) | ${r.requests} | ${fmt(r.statuses)} | ${fmt(r.codes)} | ${r.cuts} | ${r.errors500} | ${r.credits!.fromHeaders} / ${r.credits!.balanceFall}${r.credits!.exact ? '' : ' **NOT EXACT**'} | ${r.firstOkAfterS ?? 'none'} | ${r.late429} | ${r.slowUploads?.join('; ') ?? (r.healthz ? formatHealthz(r.healthz) : '-')} |`,
    );
  }
  const outDir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'faults.json'), JSON.stringify({ date: new Date().toISOString(), cpu, reports }, null, 2));
  const bad = reports.filter(
    (r) =>
      !r.skipped &&
      (r.shutdown
        ? !shutdownClean(r.shutdown)
        : r.cuts! > 0 ||
          r.errors500! > 0 ||
          !r.credits!.exact ||
          r.late429! > 0 ||
          (r.memory && (r.memory.oomKills > 0 || !r.memory.alive)) ||
          r.healthz?.ok === false ||
          (isStarvation(r.fault) && r.statuses?.['200'] !== r.requests) ||
          (r.diskFullSustained !== undefined && diskFullBad(r.diskFullSustained))),
  );
  if (bad.length > 0) {
    console.log(`bench:faults: not clean: ${bad.map((r) => r.fault).join(', ')}`);
    process.exitCode = 1;
  }
}

await main();
