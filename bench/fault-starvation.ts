// bench:faults' upload-starvation faults: 9 uploads that each declare ~30 MB and send 2 kB every
// 100 ms (20 kB/s, over the 16 kB/s floor), for at most 40 s each, while another key sends 10
// removals one after another, each a generated 2 MB PNG at preview size. ~30 MB is what fills the
// budget for bodies if they count only against the total: a ninth of the default 256 MB, and in the
// 600 MB cgroup (a budget of two largest bodies) the largest body. With `sandbox-starvation` the uploads go to the sandbox (no key); with
// `key-starvation` they come on a key capped at 1 concurrent request. Each runs against `cutout serve`
// on its defaults, then again inside a 600 MB cgroup where this process may make one (root), where the
// budget for bodies is sized down to two largest bodies. The other key's statuses are the row's; the
// uploads' answers, and when they came, go in its last column. `--upload-mb N` declares N MB instead
// (15: a sandbox body that fits an address's share of the default budget).
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../src/config.js';
import { makeMemoryCgroup, type MemoryCgroup } from '../test/harness/memory-cgroup.js';
import { errorCodeOf, type StreamRow } from './fault-report.js';
import { multipartBody } from '../test/harness/multipart.js';
import { balance, cutoutCli, send, startServer, stopServer, type Server } from '../test/harness/soak-driver.js';

export const STARVATION_FAULTS = ['sandbox-starvation', 'key-starvation'] as const;
export type StarvationFault = (typeof STARVATION_FAULTS)[number];

const UPLOADS = 9;
const uploadMbArg = process.argv.indexOf('--upload-mb');
const declaredBytes = (cgroup: boolean): number =>
  uploadMbArg > 0
    ? Math.round(Number(process.argv[uploadMbArg + 1]) * 1024 * 1024)
    : cgroup
      ? loadConfig([], {}).maxBodyBytes
      : Math.floor(loadConfig([], {}).bodyMemoryBytes / UPLOADS);
const CHUNK_BYTES = 2048;
const CHUNK_EVERY_MS = 100;
/** Each upload gives up after this long (the window). */
const UPLOAD_MAX_MS = 40_000;
const REQUESTS = 10;
/** The uploads are this far in (held or refused) before the other key starts. */
const SETTLE_MS = 1_000;
const CGROUP_BYTES = 600 * 1024 * 1024;

export interface StarvationReport extends StreamRow {
  fault: StarvationFault;
  label: string;
}

interface UploadEnd {
  status: string;
  afterMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One trickling upload on a raw socket: its answer's status (or how it ended) and when. */
function trickle(url: string, pathName: string, headers: Record<string, string>, declared: number): Promise<UploadEnd> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const socket = net.connect(Number(port), hostname);
    const chunk = Buffer.alloc(CHUNK_BYTES, 0x61);
    let answer = '';
    let tick: ReturnType<typeof setInterval> | undefined;
    const done = (status: string) => {
      clearInterval(tick);
      clearTimeout(limit);
      socket.destroy();
      resolve({ status, afterMs: performance.now() - t0 });
    };
    const limit = setTimeout(() => done('still open (client gave up)'), UPLOAD_MAX_MS);
    socket.on('connect', () => {
      const extra = Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`POST ${pathName} HTTP/1.1\r\nHost: x\r\n${extra}Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${declared}\r\n\r\n`);
      tick = setInterval(() => socket.write(chunk), CHUNK_EVERY_MS);
    });
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      const line = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (line) done(line[1]!);
    });
    socket.on('close', () => done('closed without an answer'));
    socket.on('error', () => done('connection error'));
  });
}

/** "429×8 at 0.0 s; 408×1 at 10.1 s": the uploads' answers, grouped, with the latest time of each. */
function summarise(ends: UploadEnd[]): string[] {
  const groups = new Map<string, number[]>();
  for (const e of ends) groups.set(e.status, [...(groups.get(e.status) ?? []), e.afterMs]);
  return [...groups].map(([status, ms]) => `${status}×${ms.length} by ${(Math.max(...ms) / 1000).toFixed(1)} s`);
}

function count(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}

/** The fault once: on a server's defaults, or in a cgroup of `cgroup` bytes. */
async function once(fault: StarvationFault, body: { body: Buffer; type: string }, cgroup: MemoryCgroup | undefined): Promise<StarvationReport> {
  const declared = declaredBytes(cgroup !== undefined);
  const label = `${fault}, ${declared} B uploads${cgroup ? ' (600 MB cgroup)' : ''}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-faults-starve-'));
  let server: Server | undefined;
  try {
    const keyArgs = ['keys', 'create', '--credits', '100', '--free-calls', '0', '--rate', '1000000'];
    const victim = cutoutCli([...keyArgs, '--concurrency', '4', '--label', 'served'], dataDir);
    const capped = cutoutCli([...keyArgs, '--concurrency', '1', '--label', 'trickling'], dataDir);
    server = await startServer(dataDir, { args: ['--workers', '1'], ...(cgroup && { cgroupProcs: cgroup.procs }) });
    const srv = server;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const before = await balance(agent, srv.url, victim);

    const t0 = performance.now();
    const target: { path: string; headers: Record<string, string> } =
      fault === 'sandbox-starvation' ? { path: '/sandbox/v1.0/removebg', headers: {} } : { path: '/v1.0/removebg', headers: { 'X-Api-Key': capped } };
    const uploads = Array.from({ length: UPLOADS }, () => trickle(srv.url, target.path, target.headers, declared));
    await sleep(SETTLE_MS);
    const answers: Array<{ status: number; code: string; credits: number; endMs: number }> = [];
    for (let i = 0; i < REQUESTS; i++) {
      const r = await send(
        agent,
        `${srv.url}/v1.0/removebg`,
        'POST',
        { 'X-Api-Key': victim, 'Content-Type': body.type, 'Content-Length': body.body.length },
        body.body,
        60_000,
      );
      const code = r && r.status !== 200 ? errorCodeOf(r.body) : '';
      answers.push({ status: r?.status ?? 0, code, credits: Number(r?.headers['x-credits-charged'] ?? 0), endMs: performance.now() - t0 });
    }
    const ends = await Promise.all(uploads);
    const faultMs = performance.now() - t0;
    const after = await balance(agent, srv.url, victim);
    agent.destroy();
    const fromHeaders = answers.reduce((a, s) => a + (s.status === 200 ? s.credits : 0), 0);
    const firstOk = answers.find((a) => a.status === 200);
    const report: StarvationReport = {
      fault,
      label,
      faultMs: Math.round(faultMs),
      requests: answers.length,
      statuses: count(answers.map((a) => String(a.status))),
      codes: count(answers.filter((a) => a.code).map((a) => a.code)),
      cuts: answers.filter((a) => a.status === 0).length,
      errors500: answers.filter((a) => a.status >= 500 && a.status !== 503).length,
      credits: { fromHeaders, balanceFall: before - after, exact: fromHeaders === before - after },
      firstOkAfterS: firstOk ? Math.round(firstOk.endMs / 100) / 10 : null,
      late429: answers.filter((a) => a.status === 429).length,
      slowUploads: summarise(ends),
    };
    if (cgroup) {
      const peak = cgroup.peakBytes();
      report.memory = {
        limitMb: CGROUP_BYTES / 1048576,
        peakMb: peak === undefined ? null : Math.round(peak / 1048576),
        oomKills: cgroup.oomKills(),
        alive: srv.child.exitCode === null && srv.child.signalCode === null,
      };
    }
    return report;
  } finally {
    if (server) await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The fault on a server's defaults, then in a 600 MB cgroup (skipped with the reason where none can be made). */
export async function starvation(fault: StarvationFault): Promise<StarvationReport[]> {
  // Seeded noise does not compress: 820 x 820 RGB is a ~2 MB PNG.
  const side = 820;
  const noise = Buffer.alloc(side * side * 3);
  let seed = 1;
  for (let i = 0; i < noise.length; i++) noise[i] = (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  const png = await sharp(noise, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  const body = multipartBody(png, { size: 'preview', format: 'png' });
  console.error(`bench:faults: ${fault}: the other key's body is ${body.body.length} bytes`);
  const reports = [await once(fault, body, undefined)];
  const cgroup = makeMemoryCgroup(`cutout-faults-starve-${process.pid}`, CGROUP_BYTES);
  if (typeof cgroup === 'string') return [...reports, { fault, label: `${fault} (600 MB cgroup)`, skipped: cgroup }];
  try {
    reports.push(await once(fault, body, cgroup));
  } finally {
    try {
      cgroup.remove();
    } catch {
      // a process still leaving: the kernel removes nothing in use
    }
  }
  return reports;
}
