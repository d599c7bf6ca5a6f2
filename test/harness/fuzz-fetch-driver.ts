// Fuzz driver for image_url downloads: hostile image hosts (fuzz-hosts.ts) on loopback, fetched for
// a time from several lanes, either by the fetcher itself (`fetchImage`, src/fetch/image-url.ts) or
// through one real `cutout serve` (POST /v1.0/removebg with image_url or bg_image_url, POST
// /v1.0/improve with image_url; loopback let through by test/harness/serve-loopback-entry.ts). Checked
// for every scenario:
// - the fetch settles: before the timeout unless the host stalls, never later than just after it;
// - a download gives exactly the bytes the host framed, never part of them; an error is an
//   ImageFetchError whose reason fits what the host did (the client's own abort: its reason);
// - through the service (the photo or the background from the host): a whole image is removed (200,
//   credits charged), a failed download is a 400 failed_image_download (failed_bg_download) JSON
//   naming the reason, bytes that are no image are some other 400, no 5xx but 503; the ledger
//   debited what the headers charged; improve stores what arrived whole (an id, no charge);
// - 3 s after it settled, no connection of the scenario is still open on the host's side;
// - at the end the fetcher's places are all free, nothing was thrown outside a fetch, and the server
//   is alive and healthy.

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FetchGate } from '../../src/fetch/fetch-gate.js';
import { fetchImage, ImageFetchError } from '../../src/fetch/image-url.js';
import { HostileHost, hostileScenario, type FetchLimits, type Scenario } from './fuzz-hosts.js';
import { Rng, smallImages } from './fuzz-requests.js';
import { balance, cutoutCli, send, startServer, stopServer, type Server } from './soak-driver.js';

/** The server, with loopback image URLs allowed: the hostile hosts listen on 127.0.0.1. */
const SERVE_LOOPBACK_ENTRY = fileURLToPath(new URL('./serve-loopback-entry.js', import.meta.url));

export interface FetchFuzzOptions {
  seconds: number;
  lanes: number;
  seed: number;
  /** Through a real `cutout serve` instead of calling the fetcher in this process. */
  service: boolean;
  /**
   * Also fail a fetch that took 90% of its timeout where the host did not stall (a wait nothing
   * called for). A timing check: the bench makes it, the CI test does not (a loaded box is slow).
   */
  timing?: boolean;
}

export interface FetchFuzzFailure {
  what: string;
  lane: number;
  index: number;
  scenario?: string[];
}

export interface FetchFuzzReport {
  mode: 'fetcher' | 'service';
  seed: number;
  scenarios: number;
  /** Outcomes by kind: `ok`, `error: <reason class>`, `aborted`, and HTTP statuses in service mode. */
  outcomes: Record<string, number>;
  slowestMs: number;
  credits?: { fromHeaders: number; ledgerDebit: number };
  failures: FetchFuzzFailure[];
}

/** The service's download limits (config `--fetch-timeout-ms`; the byte cap and redirects are fixed). */
const SERVICE_LIMITS: FetchLimits = { maxBytes: 22 * 1024 * 1024, totalTimeoutMs: 1500, maxRedirects: 3 };
/** In-process: a small cap, so that bodies over it are cheap. */
const FETCHER_LIMITS: FetchLimits = { maxBytes: 64 * 1024, totalTimeoutMs: 1500, maxRedirects: 3 };
/** Past the timeout by this much, the fetch hangs (generous: a loaded box is slow, a hang never ends). */
const SLACK_MS = 5000;
/** A scenario's connections must be closed this soon after it settled. */
const CLOSE_MS = 3000;

/** Images the hosts serve: the fuzz's small ones and a photo of ~40 kB (several reads, under the in-process cap). */
async function hostImages(): Promise<Buffer[]> {
  const small = await smallImages();
  const noise = Buffer.from(new Rng(7).bytes(160 * 120 * 3));
  const photo = await sharp(noise, { raw: { width: 160, height: 120, channels: 3 } })
    .png()
    .toBuffer();
  return [small.png, small.jpeg, small.webp, photo];
}

/** The reason's class for the outcome counts: its words up to the first digit or quote. */
function reasonClass(reason: string): string {
  return reason.replace(/(\d|\s['"]).*$/, '').trim();
}

async function closedSoon(host: HostileHost, scenario: Scenario): Promise<boolean> {
  for (let waited = 0; ; waited += 50) {
    if (host.openConnections(scenario) === 0) return true;
    if (waited >= CLOSE_MS) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface LaneContext {
  host: HostileHost;
  images: Buffer[];
  limits: FetchLimits;
  deadline: number;
  timing: boolean;
  report: FetchFuzzReport;
  /** Forgotten scenarios (and their redirect targets) by id: a late connection to one names its lane and index. */
  forgotten: Map<number, { lane: number; index: number; describe: string[] }>;
  /** Scenarios whose client left before the answer: kept on the host until the end of the run. */
  leftBehind: Array<{ scenario: Scenario; lane: number; index: number }>;
  count(outcome: string): void;
  fail(f: FetchFuzzFailure): void;
}

/** Takes the scenario off the host, remembering whose it was. */
function forget(ctx: LaneContext, scenario: Scenario, lane: number, index: number): void {
  ctx.host.forget(scenario);
  for (const id of [scenario.id, ...scenario.children]) ctx.forgotten.set(id, { lane, index, describe: scenario.describe });
}

/** Calls the fetcher in this process, scenario after scenario. */
async function fetcherLane(ctx: LaneContext, lane: number, rng: Rng, gate: FetchGate): Promise<void> {
  for (let index = 0; performance.now() < ctx.deadline; index++) {
    const scenario = hostileScenario(rng, ctx.host, ctx.images, ctx.limits);
    const fail = (what: string) => ctx.fail({ what, lane, index, scenario: scenario.describe });
    const abort = rng.chance(0.1) ? new AbortController() : null;
    const abortReason = new Error('client left');
    const abortTimer = abort && setTimeout(() => abort.abort(abortReason), rng.int(ctx.limits.totalTimeoutMs));
    const started = performance.now();
    let hangTimer: NodeJS.Timeout | undefined;
    const hang = new Promise<'hang'>((r) => (hangTimer = setTimeout(() => r('hang'), ctx.limits.totalTimeoutMs + SLACK_MS)));
    const outcome = await Promise.race([
      fetchImage(new URL(ctx.host.url(scenario.id)), {
        ...ctx.limits,
        connectTimeoutMs: 1000,
        allowLoopback: true,
        gate,
        ...(abort && { signal: abort.signal }),
      }).then(
        (r) => ({ data: r.data }),
        (err: unknown) => ({ err }),
      ),
      hang,
    ]);
    clearTimeout(hangTimer);
    if (abortTimer) clearTimeout(abortTimer);
    const ms = performance.now() - started;
    ctx.report.slowestMs = Math.max(ctx.report.slowestMs, Math.round(ms));
    ctx.report.scenarios++;
    const expect = scenario.expect;
    if (outcome === 'hang') {
      fail(`not settled ${ctx.limits.totalTimeoutMs + SLACK_MS} ms after the fetch began`);
      continue; // its connections are left to the host's stop
    }
    if ('data' in outcome) {
      ctx.count('ok');
      if (expect.kind === 'error') fail(`downloaded ${outcome.data.length} bytes where the host's framing is an error (${expect.reason})`);
      else if (!outcome.data.equals(expect.body)) fail(`downloaded ${outcome.data.length} bytes, not the ${expect.body.length} the host framed`);
    } else if (abort?.signal.aborted && outcome.err === abortReason) {
      ctx.count('aborted by the client');
    } else if (!(outcome.err instanceof ImageFetchError)) {
      fail(`rejected with ${String(outcome.err)}, not an ImageFetchError`);
    } else {
      ctx.count(`error: ${reasonClass(outcome.err.reason)}`);
      if (expect.kind === 'ok') fail(`error "${outcome.err.reason}" where the host sent a whole body`);
      else if (expect.kind === 'error' && !expect.reason.test(outcome.err.reason)) fail(`error "${outcome.err.reason}", expected ${expect.reason}`);
      if (ctx.timing && !scenario.stalls && !abort && ms > ctx.limits.totalTimeoutMs * 0.9) fail(`took ${Math.round(ms)} ms though the host did not stall`);
    }
    if (!(await closedSoon(ctx.host, scenario))) fail(`a connection still open on the host ${CLOSE_MS} ms after the fetch settled`);
    forget(ctx, scenario, lane, index);
  }
}

interface ServiceContext extends LaneContext {
  server: Server;
  key: string;
  agent: http.Agent;
  charged: { total: number };
}

interface ErrorBody {
  errors?: Array<{ title?: string; code?: string; detail?: string }>;
}

/** POSTs the host's URL to the server (removebg's image_url or bg_image_url, improve's image_url), scenario after scenario, and checks each answer. */
async function serviceLane(ctx: ServiceContext, lane: number, rng: Rng): Promise<void> {
  for (let index = 0; performance.now() < ctx.deadline; index++) {
    const scenario = hostileScenario(rng, ctx.host, ctx.images, ctx.limits);
    const fail = (what: string) => ctx.fail({ what, lane, index, scenario: scenario.describe });
    const url = ctx.host.url(scenario.id);
    // The photo from the host, a photo uploaded (base64) and its background from the host, or an
    // image for /v1.0/improve from the host.
    const roll = rng.next();
    const target: Target = roll < 0.6 ? 'image_url' : roll < 0.85 ? 'bg_image_url' : 'improve';
    const fields: Record<string, string> = target === 'improve' ? { image_url: url, tag: 'fuzz' } : { [target]: url, size: 'preview' };
    if (target === 'bg_image_url') fields.image_file_b64 = ctx.images[0]!.toString('base64');
    const json = rng.chance(0.5);
    const body = Buffer.from(json ? JSON.stringify(fields) : new URLSearchParams(fields).toString());
    const headers = { 'X-Api-Key': ctx.key, 'Content-Type': json ? 'application/json' : 'application/x-www-form-urlencoded', 'Content-Length': body.length };
    // A client that leaves while a stalled download is under way: the server must drop the download.
    const leave = scenario.stalls && scenario.expect.kind === 'error' && rng.chance(0.3) ? new AbortController() : null;
    const leaveTimer = leave && setTimeout(() => leave.abort(), ctx.limits.totalTimeoutMs * (0.2 + 0.3 * rng.next()));
    const started = performance.now();
    const path = target === 'improve' ? '/v1.0/improve' : '/v1.0/removebg';
    const answer = await send(ctx.agent, `${ctx.server.url}${path}`, 'POST', headers, body, 30_000, leave ? { signal: leave.signal } : {});
    if (leaveTimer) clearTimeout(leaveTimer);
    const ms = performance.now() - started;
    ctx.report.slowestMs = Math.max(ctx.report.slowestMs, Math.round(ms));
    ctx.report.scenarios++;
    if (!answer) {
      if (leave?.signal.aborted) ctx.count('left by the client');
      else fail('no answer within 30 s');
    } else {
      ctx.count(`${target === 'improve' ? 'improve ' : ''}${checkAnswer(ctx, scenario, target, answer.status, answer.headers, answer.body, fail)}`);
    }
    const left = !answer && leave?.signal.aborted === true;
    if (!(await closedSoon(ctx.host, scenario))) fail(`a connection still open on the host ${CLOSE_MS} ms after the ${left ? 'client left' : 'answer'}`);
    // The server learns that its client left a moment later (the close comes through its event loop,
    // late on a loaded box); until then its download may still follow a redirect. Such a scenario
    // stays on the host to the end of the run, where its connections must all be closed.
    if (left) ctx.leftBehind.push({ scenario, lane, index });
    else forget(ctx, scenario, lane, index);
  }
}

/** Where the host's URL goes: the photo's or the background's field of removebg, or improve's image_url. */
type Target = 'image_url' | 'bg_image_url' | 'improve';

/** Checks one answer; returns its label for the counts (status, error code, reason class). */
function checkAnswer(
  ctx: ServiceContext,
  scenario: Scenario,
  target: Target,
  status: number,
  headers: http.IncomingHttpHeaders,
  body: Buffer,
  fail: (what: string) => void,
): string {
  const field = target === 'bg_image_url' ? 'bg_image_url' : 'image_url';
  const downloadCode = field === 'bg_image_url' ? 'failed_bg_download' : 'failed_image_download';
  const expect = scenario.expect;
  if (status === 200 && target === 'improve') {
    // Stored, not decoded: any bytes with an image signature (a cut image too); never a failed download.
    let id: unknown;
    try {
      id = (JSON.parse(body.toString()) as { id?: unknown }).id;
    } catch {
      // checked below
    }
    if (typeof id !== 'string') fail(`improve 200 without an id: ${body.toString().slice(0, 200)}`);
    if (headers['x-credits-charged'] !== undefined && headers['x-credits-charged'] !== '0') fail(`improve charged ${headers['x-credits-charged']}`);
    if (expect.kind === 'error') fail(`improve stored a download that failed (${expect.reason})`);
    return '200';
  }
  if (status === 200) {
    const credits = Number(headers['x-credits-charged']);
    if (!Number.isInteger(credits)) fail(`200 without an integer X-Credits-Charged (${headers['x-credits-charged']})`);
    else ctx.charged.total += credits;
    // PNG, or JPEG where a background image makes the result opaque (format auto).
    const png = body.subarray(1, 4).equals(Buffer.from('PNG'));
    const jpeg = body.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]));
    if (!png && !(jpeg && field === 'bg_image_url')) fail(`200 whose body is not a ${field === 'bg_image_url' ? 'PNG or JPEG' : 'PNG'}`);
    // A cut image may still decode (as an upload of the same bytes would); an error or nothing may not.
    if (expect.kind === 'error') fail(`removed an image where the host's framing is an error (${expect.reason})`);
    else if (expect.body.length === 0) fail('removed an empty download');
    return '200';
  }
  let error: { title?: string; code?: string; detail?: string } | undefined;
  try {
    error = (JSON.parse(body.toString()) as ErrorBody).errors?.[0];
  } catch {
    // checked below
  }
  if (!error?.title || !error.code) {
    fail(`${status} whose body is not a JSON error with title and code: ${body.toString().slice(0, 200)}`);
    return String(status);
  }
  const label = `${status} ${error.code}: ${reasonClass((error.detail ?? '').replace(/^[^:]*: /, ''))}`;
  if (status === 503 && error.code === 'service_busy') return label;
  if (status !== 400) {
    fail(`${status} ${error.code}: ${error.detail ?? error.title}`);
    return label;
  }
  // A background that arrived but does not decode shares the code (title "Failed to read background image").
  const downloadFailed = error.code === downloadCode && error.title !== 'Failed to read background image';
  if (expect.kind === 'error') {
    if (!downloadFailed) fail(`400 ${error.code} where the download must fail (${expect.reason})`);
    else if (!expect.reason.test(error.detail ?? '')) fail(`${downloadCode} "${error.detail}", expected ${expect.reason}`);
  } else if (expect.kind === 'ok') {
    if (downloadFailed) fail(`${downloadCode} "${error.detail}" where the host sent a whole body`);
    else if (ctx.images.some((img) => img.equals(expect.body))) fail(`400 ${error.code} for a whole image: ${error.detail}`);
  }
  return label;
}

function newReport(mode: FetchFuzzReport['mode'], seed: number): FetchFuzzReport {
  return { mode, seed, scenarios: 0, outcomes: {}, slowestMs: 0, failures: [] };
}

export async function runFetchFuzz(opts: FetchFuzzOptions): Promise<FetchFuzzReport> {
  const report = newReport(opts.service ? 'service' : 'fetcher', opts.seed);
  const host = new HostileHost();
  await host.start();
  const images = await hostImages();
  // Anything thrown outside a fetch's own promise (a stream error nobody listens to) is a failure.
  const stray = (err: unknown) => report.failures.push({ what: `thrown outside a fetch: ${String(err)}`, lane: -1, index: -1 });
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);
  const ctx: LaneContext = {
    host,
    images,
    limits: opts.service ? SERVICE_LIMITS : FETCHER_LIMITS,
    deadline: performance.now() + opts.seconds * 1000,
    timing: opts.timing ?? false,
    report,
    forgotten: new Map(),
    leftBehind: [],
    count: (o) => void (report.outcomes[o] = (report.outcomes[o] ?? 0) + 1),
    fail: (f) => void report.failures.push(f),
  };
  const rngOf = (lane: number) => new Rng(opts.seed * 7919 + lane);
  try {
    if (opts.service) await runService(ctx, opts, rngOf);
    else {
      const gate = new FetchGate({ maxFetches: opts.lanes, maxLookups: 2 });
      await Promise.all(Array.from({ length: opts.lanes }, (_, lane) => fetcherLane(ctx, lane, rngOf(lane), gate)));
      const inUse = gate.inUse;
      if (inUse.fetches !== 0 || inUse.lookups !== 0 || inUse.waitingLookups !== 0) {
        report.failures.push({ what: `the fetcher's places are not all free at the end: ${JSON.stringify(inUse)}`, lane: -1, index: -1 });
      }
    }
    for (const id of host.strays) {
      const origin = ctx.forgotten.get(id);
      report.failures.push(
        origin
          ? { what: `a connection to scenario ${id} after it was answered`, lane: origin.lane, index: origin.index, scenario: origin.describe }
          : { what: `a connection named scenario ${id}, which this run never made`, lane: -1, index: -1 },
      );
    }
  } finally {
    process.off('uncaughtException', stray);
    process.off('unhandledRejection', stray);
    await host.stop();
  }
  return report;
}

async function runService(ctx: LaneContext, opts: FetchFuzzOptions, rngOf: (lane: number) => Rng): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-fuzz-fetch-'));
  const key = cutoutCli(['keys', 'create', '--credits', '1000000', '--free-calls', '0', '--concurrency', String(opts.lanes + 2), '--rate', '1000000'], dataDir);
  const server = await startServer(dataDir, {
    args: ['--workers', '1', '--fetch-timeout-ms', String(SERVICE_LIMITS.totalTimeoutMs)],
    entry: SERVE_LOOPBACK_ENTRY,
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.lanes });
  try {
    const before = await balance(agent, server.url, key);
    const sctx: ServiceContext = { ...ctx, server, key, agent, charged: { total: 0 } };
    await Promise.all(Array.from({ length: opts.lanes }, (_, lane) => serviceLane(sctx, lane, rngOf(lane))));
    for (const { scenario, lane, index } of ctx.leftBehind) {
      if (!(await closedSoon(ctx.host, scenario)))
        ctx.fail({ what: `a connection still open on the host at the end of the run, its client long gone`, lane, index, scenario: scenario.describe });
      forget(ctx, scenario, lane, index);
    }
    const alive = server.child.exitCode === null;
    if (!alive) ctx.report.failures.push({ what: `the server exited (${server.child.exitCode}): ${server.stderr.join('').slice(-500)}`, lane: -1, index: -1 });
    else {
      const health = await send(agent, `${server.url}/healthz`, 'GET', {}, undefined, 10_000);
      if (health?.status !== 200) ctx.report.failures.push({ what: `/healthz answered ${health?.status} after the run`, lane: -1, index: -1 });
      const debit = before - (await balance(agent, server.url, key));
      ctx.report.credits = { fromHeaders: sctx.charged.total, ledgerDebit: debit };
      if (debit !== sctx.charged.total)
        ctx.report.failures.push({ what: `the ledger debited ${debit}, the headers charged ${sctx.charged.total}`, lane: -1, index: -1 });
    }
  } finally {
    agent.destroy();
    await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
