// Fuzz driver: hostile requests (fuzz-requests.ts) against one real `cutout serve` (real pool, LMDB
// ledger in a temporary folder) over raw sockets, for a time, from several lanes. Every answer is
// checked: no 5xx but 503, every error a JSON body with errors[0].title and code, every 200 of
// removebg an image (or JSON, or zip) with an integer X-Credits-Charged, credits in the headers equal
// to the ledger's debit, no exchange left hanging, no connection closed unanswered except where uWS
// closes it itself (fuzz-requests.ts: SilentReason), and the server alive and healthy at the end.
// Each lane connects from its own loopback address: a framing refusal also closes requests read from
// the same address in that event-loop turn (http/context.ts), which is by design and not what this
// looks for. Used by bench/fuzz-http.ts (npm run bench:faults --faults fuzz-http) and the CI-sized fuzz test.

import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fuzzRequest, Rng, smallImages, type FuzzRequest } from './fuzz-requests.js';
import { makeSelfSigned, type CertFiles } from './self-signed.js';
import { balance, cutoutCli, processTreeRssMb, send, startServer, stopServer } from './soak-driver.js';

export interface FuzzOptions {
  seconds: number;
  lanes: number;
  seed: number;
  /** A postgres:// ledger for the key and the server instead of LMDB in a temp folder. */
  ledgerUrl?: string;
  /** More `cutout serve` flags (e.g. `--processes 2`). */
  serveArgs?: string[];
  /** Serve HTTPS (a throwaway self-signed certificate) and send every request over TLS. */
  tls?: boolean;
}

/** The server's --request-timeout: a body that never completes is answered 408 after it. */
const REQUEST_TIMEOUT_S = 10;
/** Longer than the deadline plus uWS's idle close (10–12 s): an exchange still open then hangs. */
const HANG_MS = 40_000;

interface Response {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The complete responses at the start of `data` (Content-Length or chunked bodies; none for HEAD), to `methods` in order. */
function parseResponses(data: Buffer, methods: string[]): Response[] {
  const out: Response[] = [];
  let at = 0;
  while (at < data.length) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const lines = data.subarray(at, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]!);
    if (!m) break;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    let bodyEnd = end + 4;
    let body: Buffer = Buffer.alloc(0);
    if (methods[out.length] === 'HEAD') {
      // The GET answer's headers, Content-Length included, and no body.
    } else if (headers['transfer-encoding'] === 'chunked') {
      const chunks: Buffer[] = [];
      for (;;) {
        const lineEnd = data.indexOf('\r\n', bodyEnd);
        if (lineEnd < 0) return out;
        const size = parseInt(data.subarray(bodyEnd, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size) || lineEnd + 2 + size + 2 > data.length) return out;
        chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        bodyEnd = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(chunks);
    } else if (headers['content-length'] !== undefined && Number(m[1]) !== 304) {
      const length = Number(headers['content-length']);
      if (bodyEnd + length > data.length) return out;
      body = data.subarray(bodyEnd, bodyEnd + length);
      bodyEnd += length;
    }
    out.push({ status: Number(m[1]), headers, body });
    at = bodyEnd;
  }
  return out;
}

interface Exchange {
  data: Buffer;
  ms: number;
  hung: boolean;
}

/** Sends one request from `localAddress` and collects everything until the server closes. */
function exchange(port: number, localAddress: string, req: FuzzRequest, rng: Rng, overTls: boolean): Promise<Exchange> {
  return new Promise((resolve) => {
    // Over TLS the same bytes go through the handshake first (written before it ends, they wait).
    const tcp = net.connect({ port, host: '127.0.0.1', localAddress });
    const socket = overTls ? tls.connect({ socket: tcp, rejectUnauthorized: false }) : tcp;
    const got: Buffer[] = [];
    const t0 = performance.now();
    let done = false;
    const finish = (hung: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(hang);
      socket.destroy();
      resolve({ data: Buffer.concat(got), ms: performance.now() - t0, hung });
    };
    const hang = setTimeout(() => finish(true), HANG_MS);
    socket.on('data', (d: Buffer) => got.push(d));
    socket.on('close', () => finish(false));
    socket.on('error', () => {}); // a reset counts as a close
    if (req.giveUpAfterMs !== null) setTimeout(() => socket.destroy(), req.giveUpAfterMs);
    if (!req.pieces) return void socket.write(req.bytes);
    // A slow client: pieces of up to 2 kB with pauses of up to 5 ms, drawn before the first write
    // so that the generator's sequence (and a replay by seed) does not depend on timing.
    const plan: Array<{ size: number; pauseMs: number }> = [];
    for (let left = req.bytes.length; left > 0; ) {
      const size = Math.min(left, 1 + rng.int(2000));
      plan.push({ size, pauseMs: rng.int(6) });
      left -= size;
    }
    let offset = 0;
    const step = (i: number) => {
      if (i >= plan.length || socket.destroyed) return;
      socket.write(req.bytes.subarray(offset, offset + plan[i]!.size));
      offset += plan[i]!.size;
      setTimeout(() => step(i + 1), plan[i]!.pauseMs);
    };
    step(0);
  });
}

export interface Failure {
  what: string;
  lane: number;
  index: number;
  /** The request (its head, the body left out), where the failure is one request's. */
  request?: Omit<FuzzRequest, 'bytes'> & { head: string };
  response: string;
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** What is wrong with one answer, or null. */
function answerProblem(req: FuzzRequest, r: Response): string | null {
  if (r.status >= 500 && r.status !== 503) return `status ${r.status}`;
  if (r.status >= 400 && req.method !== 'HEAD') {
    if (!/^application\/json/.test(r.headers['content-type'] ?? '')) return `error ${r.status} is not JSON (${r.headers['content-type']})`;
    try {
      const e = (JSON.parse(r.body.toString('utf8')) as { errors?: Array<{ title?: unknown; code?: unknown }> }).errors?.[0];
      if (typeof e?.title !== 'string' || typeof e.code !== 'string') return `error ${r.status} without errors[0].title and code`;
    } catch {
      return `error ${r.status} with a body that is not JSON`;
    }
  }
  if (r.status === 200 && /removebg/.test(req.path) && req.method === 'POST') {
    const type = r.headers['content-type'] ?? '';
    if (!/^(image\/(png|jpeg|webp)|application\/(zip|json))/.test(type)) return `200 with Content-Type ${type}`;
    if (!/^\d+$/.test(r.headers['x-credits-charged'] ?? '')) return `200 without an integer X-Credits-Charged`;
    if (type === 'image/png' && !r.body.subarray(0, 8).equals(PNG)) return '200 image/png whose body is not a PNG';
    if (/^image\//.test(type) && !(Number(r.headers['x-width']) > 0 && Number(r.headers['x-height']) > 0)) return '200 image without X-Width/X-Height';
  }
  return null;
}

export interface FuzzReport {
  seconds: number;
  lanes: number;
  seed: number;
  /** The server's start-up line (device, model, workers). */
  server: string;
  sent: number;
  statuses: Record<string, number>;
  /** Connections closed without an answer where uWS closes them itself, by reason. */
  closedUnansweredBy: Record<string, number>;
  credits: { fromHeaders: number; ledgerDebit: number };
  serverRssMb: { start: number; end: number };
  failures: Failure[];
}

const tlsFlags = (c: CertFiles) => ['--tls-cert', c.cert, '--tls-key', c.key];

const serverFailure = (what: string): Failure => ({ what, lane: -1, index: -1, response: '' });

/** Runs the fuzz for `seconds` and reports; every failed check is in `failures`. */
export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const { lanes, seed } = opts;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-fuzz-'));
  const ledger = opts.ledgerUrl ? ['--ledger', opts.ledgerUrl] : [];
  const key = cutoutCli(
    ['keys', 'create', '--credits', '1000000', '--free-calls', '0', '--concurrency', String(lanes + 2), '--rate', '1000000', ...ledger],
    dataDir,
  );
  const server = await startServer(dataDir, {
    args: [
      '--workers',
      '1',
      '--request-timeout',
      String(REQUEST_TIMEOUT_S),
      '--sandbox-rate-per-minute',
      '1000000',
      ...ledger,
      ...(opts.tls ? tlsFlags(makeSelfSigned(dataDir, 'fuzz', 'ec')) : []),
      ...(opts.serveArgs ?? []),
    ],
  });
  const port = Number(new URL(server.url).port);
  const images = await smallImages();
  const agent = opts.tls ? new https.Agent({ rejectUnauthorized: false }) : new http.Agent();
  const creditsBefore = await balance(agent, server.url, key);
  const rssStart = processTreeRssMb(server.child.pid!);

  const statuses: Record<string, number> = {};
  const silent: Record<string, number> = {};
  const failures: Failure[] = [];
  let sent = 0;
  let charged = 0;
  const deadline = performance.now() + opts.seconds * 1000;

  async function lane(n: number): Promise<void> {
    const rng = new Rng(seed * 1009 + n);
    const localAddress = `127.0.0.${10 + n}`;
    for (let index = 0; performance.now() < deadline; index++) {
      const req = fuzzRequest(rng, images, key, port);
      const ex = await exchange(port, localAddress, req, rng, opts.tls === true);
      sent++;
      const answers = parseResponses(ex.data, [req.method, 'GET']);
      const fail = (what: string) => {
        const { bytes, ...rest } = req;
        const head = bytes
          .subarray(0, bytes.indexOf('\r\n\r\n'))
          .toString('latin1')
          .replace(/a{200,}/g, (a) => `a×${a.length}`);
        failures.push({ what, lane: n, index, request: { ...rest, head }, response: ex.data.subarray(0, 400).toString('latin1') });
      };
      if (ex.hung) fail(`no answer and not closed after ${HANG_MS} ms`);
      answers.forEach((r, i) => {
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        // The second answer of a pipelined pair is the account GET behind the fuzzed request.
        const problem = answerProblem(i === 0 ? req : { ...req, method: 'GET', path: '/v1.0/account' }, r);
        if (problem) fail(i === 0 ? problem : `pipelined GET /v1.0/account: ${problem}`);
        if (i === 0 && r.status === 200 && req.method === 'POST' && /removebg/.test(req.path)) charged += Number(r.headers['x-credits-charged'] ?? 0);
      });
      const closedAfter = answers.at(-1)?.headers.connection === 'close';
      if (answers.length === 0 && !ex.hung) {
        const why = req.mayBeSilent.join(' + ') || 'UNEXPECTED';
        silent[why] = (silent[why] ?? 0) + 1;
        if (req.mayBeSilent.length === 0) fail('closed without an answer');
      } else if (answers.length > 0 && answers.length < req.answers && !closedAfter) {
        // uWS answers both of a pipelined pair, or (the first still pending) neither.
        fail(`${answers.length} of ${req.answers} pipelined answers`);
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: lanes }, (_, n) => lane(n)));
    const alive = server.child.exitCode === null;
    if (!alive) failures.push(serverFailure(`server exited (${server.child.exitCode}): ${server.stderr.join('').slice(-400)}`));
    const health = alive ? ((await send(agent, `${server.url}/healthz`, 'GET', {}, undefined, 30_000))?.status ?? 0) : 0;
    if (alive && health !== 200) failures.push(serverFailure(`/healthz answered ${health} after the run`));
    const creditsAfter = alive ? await balance(agent, server.url, key) : NaN;
    const debit = creditsBefore - creditsAfter;
    if (alive && debit !== charged) failures.push(serverFailure(`credits: headers say ${charged} charged, the ledger debited ${debit}`));
    const rssEnd = alive ? processTreeRssMb(server.child.pid!) : NaN;
    return {
      seconds: opts.seconds,
      lanes,
      seed,
      server: server.startup[0] ?? '',
      sent,
      statuses,
      closedUnansweredBy: silent,
      credits: { fromHeaders: charged, ledgerDebit: debit },
      serverRssMb: { start: Math.round(rssStart), end: Math.round(rssEnd) },
      failures,
    };
  } finally {
    agent.destroy();
    await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
