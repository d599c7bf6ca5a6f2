// Fault many-fields (bench/faults.ts): bodies with a huge number of fields, which the server parses on
// its main thread, while a poller (its own thread, so the sender's work cannot delay it) asks /healthz
// every 20 ms. 10 bodies to /v1.0/removebg on a key, two at a time, alternating a JSON object of
// 1,000,000 keys (11.9 MB) and a multipart body of 300,000 parts; then 4 of them to the sandbox, two
// at a time. Reports their statuses and codes, and /healthz latency while each batch was in flight
// (p50, p99, max; and for 2 s before, idle); the target is p99 ≤ 100 ms. A real `cutout serve` on
// LMDB, one worker.

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { errorCodeOf } from './fault-report.js';
import { balance, cutoutCli, send, startServer, stopServer, type Server } from '../test/harness/soak-driver.js';
import { quantile } from '../test/harness/stats.js';

const KEYED_BODIES = 10;
const SANDBOX_BODIES = 4;
const AT_ONCE = 2;
const POLL_MS = 20;
/** /healthz polled this long before the first body: the machine's own latency, for comparison. */
const IDLE_MS = 2_000;
/** /healthz's p99 while the bodies arrive must stay at or under this. */
export const HEALTHZ_P99_TARGET_MS = 100;
const CLIENT_TIMEOUT_MS = 60_000;
const JSON_KEYS = 1_000_000;
const MULTIPART_PARTS = 300_000;
const BOUNDARY = 'manyFieldsFault';

export interface HealthzFigures {
  polls: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ManyFieldsResult {
  faultMs: number;
  requests: number;
  statuses: Record<string, number>;
  codes: Record<string, number>;
  cuts: number;
  errors500: number;
  credits: { fromHeaders: number; balanceFall: number; exact: boolean };
  healthz: { idle: HealthzFigures; keyed: HealthzFigures; sandbox: HealthzFigures; ok: boolean };
}

interface Body {
  type: string;
  body: Buffer;
}

function jsonBody(): Body {
  const keys = Array.from({ length: JSON_KEYS }, (_, i) => `"k${i}":0`);
  return { type: 'application/json', body: Buffer.from(`{${keys.join(',')}}`) };
}

function multipartBody(): Body {
  const parts = Array.from({ length: MULTIPART_PARTS }, (_, i) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`);
  return { type: `multipart/form-data; boundary=${BOUNDARY}`, body: Buffer.from(`${parts.join('')}--${BOUNDARY}--\r\n`) };
}

interface Answer {
  status: number;
  code: string;
  credits: number;
}

/** Sends `bodies` to `url`, `AT_ONCE` at a time. */
async function sendAll(url: string, headers: Record<string, string>, bodies: Body[]): Promise<Answer[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: AT_ONCE });
  const answers: Answer[] = [];
  let next = 0;
  const lane = async () => {
    while (next < bodies.length) {
      const { type, body } = bodies[next++]!;
      const r = await send(agent, url, 'POST', { ...headers, 'Content-Type': type, 'Content-Length': body.length }, body, CLIENT_TIMEOUT_MS);
      const code = r && r.status !== 200 ? errorCodeOf(r.body) : '';
      answers.push({ status: r?.status ?? 0, code, credits: Number(r?.headers['x-credits-charged'] ?? 0) });
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  agent.destroy();
  return answers;
}

/** One /healthz poll: when it was sent (ms since the epoch, comparable across threads) and how long it took. */
interface Poll {
  at: number;
  ms: number;
}

const now = () => performance.timeOrigin + performance.now();

/** A /healthz poller on its own thread; `stop()` resolves with its polls. */
async function startPoller(url: string): Promise<{ stop: () => Promise<Poll[]> }> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { healthzPoller: url } });
  const messages: Array<(m: 'polling' | Poll[]) => void> = [];
  worker.on('message', (m: 'polling' | Poll[]) => messages.shift()?.(m));
  const next = () =>
    new Promise<'polling' | Poll[]>((resolve, reject) => {
      messages.push(resolve);
      worker.once('error', reject);
    });
  await next(); // its first poll has been answered
  return {
    stop: async () => {
      const polls = next();
      worker.postMessage('stop');
      const out = (await polls) as Poll[];
      await worker.terminate();
      return out;
    },
  };
}

/** The poller's thread: GET /healthz every POLL_MS (or as soon as the last one answered) until told to stop. */
async function pollHealthz(url: string): Promise<void> {
  let stopping = false;
  parentPort!.once('message', () => {
    stopping = true;
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const polls: Poll[] = [];
  while (!stopping) {
    const at = now();
    const r = await send(agent, `${url}/healthz`, 'GET', {}, undefined, CLIENT_TIMEOUT_MS);
    const ms = now() - at;
    polls.push({ at, ms: r?.status === 200 ? ms : Infinity }); // no answer counts as the worst latency
    if (polls.length === 1) parentPort!.postMessage('polling');
    const wait = POLL_MS - ms;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  agent.destroy();
  parentPort!.postMessage(polls);
}

/** The polls sent from `from` to `to`, and the one in flight at `from`. */
const within = (polls: Poll[], from: number, to: number): number[] => polls.filter((p) => p.at + p.ms >= from && p.at <= to).map((p) => p.ms);

const figures = (ms: number[]): HealthzFigures => ({
  polls: ms.length,
  p50: Math.round(quantile(ms, 0.5) * 10) / 10,
  p99: Math.round(quantile(ms, 0.99) * 10) / 10,
  max: Math.round(Math.max(...ms) * 10) / 10,
});

function count<T>(xs: T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}

/** Runs the fault against a server of its own and reports what the clients and the poller saw. */
export async function manyFields(): Promise<ManyFieldsResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-faults-fields-'));
  let server: Server | undefined;
  try {
    const key = cutoutCli(
      ['keys', 'create', '--credits', '100', '--free-calls', '0', '--concurrency', String(AT_ONCE), '--rate', '1000000', '--label', 'faults'],
      dataDir,
    );
    server = await startServer(dataDir, { args: ['--workers', '1'] });
    const json = jsonBody();
    const multipart = multipartBody();
    console.error(
      `bench:faults: many-fields: JSON ${(json.body.length / 1e6).toFixed(1)} MB (${JSON_KEYS} keys), multipart ${(multipart.body.length / 1e6).toFixed(1)} MB (${MULTIPART_PARTS} parts)`,
    );
    const alternate = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? json : multipart));
    const agent = new http.Agent({ keepAlive: false });
    const before = await balance(agent, server.url, key);
    const poller = await startPoller(server.url);
    const idleFrom = now();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const keyedFrom = now();
    const keyed = await sendAll(`${server.url}/v1.0/removebg`, { 'X-Api-Key': key }, alternate(KEYED_BODIES));
    const sandboxFrom = now();
    const sandbox = await sendAll(`${server.url}/sandbox/v1.0/removebg`, {}, alternate(SANDBOX_BODIES));
    const sandboxTo = now();
    const polls = await poller.stop();
    const faultMs = sandboxTo - keyedFrom;
    const after = await balance(agent, server.url, key);
    agent.destroy();
    const all = [...keyed, ...sandbox];
    const fromHeaders = keyed.reduce((a, s) => a + (s.status === 200 ? s.credits : 0), 0);
    const healthz = {
      idle: figures(within(polls, idleFrom, keyedFrom)),
      keyed: figures(within(polls, keyedFrom, sandboxFrom)),
      sandbox: figures(within(polls, sandboxFrom, sandboxTo)),
    };
    return {
      faultMs: Math.round(faultMs),
      requests: all.length,
      statuses: count(all, (s) => String(s.status)),
      codes: count(
        all.filter((s) => s.code),
        (s) => s.code,
      ),
      cuts: all.filter((s) => s.status === 0).length,
      errors500: all.filter((s) => s.status >= 500 && s.status !== 503).length,
      credits: { fromHeaders, balanceFall: before - after, exact: fromHeaders === before - after },
      healthz: { ...healthz, ok: healthz.keyed.p99 <= HEALTHZ_P99_TARGET_MS && healthz.sandbox.p99 <= HEALTHZ_P99_TARGET_MS },
    };
  } finally {
    if (server) await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The figures as the row's last column shows them. */
export function formatHealthz(h: ManyFieldsResult['healthz']): string {
  const one = (f: HealthzFigures) => `p50 ${f.p50} / p99 ${f.p99} / max ${f.max} ms (${f.polls} polls)`;
  return `/healthz idle ${one(h.idle)}; keyed ${one(h.keyed)}; sandbox ${one(h.sandbox)}${h.ok ? '' : ` **p99 over ${HEALTHZ_P99_TARGET_MS} ms**`}`;
}

if (!isMainThread && typeof (workerData as { healthzPoller?: unknown })?.healthzPoller === 'string') {
  await pollHealthz((workerData as { healthzPoller: string }).healthzPoller);
}
