// GET /metrics: counters move by exactly the requests made, the text parses with a Prometheus text
// parser (parse-prometheus-text-format: it refuses malformed lines; it drops labelled histogram
// series, so their _count/_sum lines are read from the text itself), and access is by bearer token,
// or open on a loopback bind only.
import { createRequire } from 'node:module';
import t, { type Test } from 'tap';
import type { Config } from '../../src/config.js';
import { createMetrics } from '../../src/observe/metrics.js';
import { KEY, postImage } from '../helpers/api.js';
import { firstError, request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { FakePool } from '../helpers/fake-pool.js';
import { sandboxImage } from '../helpers/sandbox.js';
import { startTestServer, type ServerEvents } from '../helpers/server.js';

interface Sample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}
interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

const TOKEN = 'metrics-token-0123456789abcdef';

type Scrape = Map<string, Family> & { text: string };

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await request(`${url}/metrics`, { headers });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${res.text()}`);
  if (!/^text\/plain; version=0\.0\.4/.test(String(res.headers['content-type']))) throw new Error(`content type ${res.headers['content-type']}`);
  return parsed(res.text());
}

function parsed(text: string): Scrape {
  return Object.assign(new Map(parse(text).map((f) => [f.name, f])), { text });
}

const labelText = (labels: Record<string, string>) => Object.entries(labels).map(([k, v]) => `${k}="${v}"`);

/** The value of one sample (0 when absent): counters and gauges by labels; a histogram's _count or _sum. */
function value(s: Scrape, name: string, labels: Record<string, string> = {}, part: 'count' | 'sum' = 'count'): number {
  const f = s.get(name);
  if (f?.type === 'HISTOGRAM') {
    const line = s.text.split('\n').find((l) => l.startsWith(`${name}_${part}`) && labelText(labels).every((p) => l.includes(p)));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }
  const sample = f?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample ? Number(sample.value) : 0;
}

/** Resolves once `n` requests have completely ended (observers run before the test's hook). */
async function endsReached(events: ServerEvents, n: number): Promise<void> {
  while (events.ended.length < n) await events.nextEnd();
}

function startWithMetrics(t: Test, config: Partial<Config> = {}) {
  const metrics = createMetrics('9.9.9-test');
  const pool = new FakePool({ workers: 1, lowPriorityPlaces: 1 });
  metrics.attachPool(pool);
  return startTestServer(t, { pool, metrics, observers: [metrics], config: { metricsToken: TOKEN, ...config } });
}

t.test('counters move by exactly the requests made; histograms and gauges parse', async (t) => {
  const { url, ledger, events, pool } = await startWithMetrics(t, { sandboxRatePerMinute: 1 });
  ledger.addAccount('poor', { credits: 0 });
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const before = await scrape(url, auth);
  const img = await makeImage('png');

  const requests = [
    postImage(url, img), // 200, 1 credit
    postImage(url, img), // 200, 1 credit
    postImage(url, img, {}, { 'X-Api-Key': 'poor' }), // 402
    postImage(url, img, {}, { 'X-Api-Key': 'wrong' }), // 403
    request(`${url}/nope`), // 404
  ];
  for (const r of requests) await r;
  t.equal((await sandboxImage(url, img)).status, 200);
  t.equal((await sandboxImage(url, img)).status, 429, 'over the window of 1');
  await pool.whenIdle();
  await endsReached(events, 1 + requests.length + 2); // the first scrape too: observers run as a request ends

  const after = await scrape(url, auth);
  const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
  t.equal(delta('cutout_http_requests_total', { route: '/v1.0/removebg', status: '200' }), 2);
  t.equal(delta('cutout_http_requests_total', { route: '/v1.0/removebg', status: '402' }), 1);
  t.equal(delta('cutout_http_requests_total', { route: '/v1.0/removebg', status: '403' }), 1);
  t.equal(delta('cutout_http_requests_total', { route: 'unmatched', status: '404' }), 1);
  t.equal(delta('cutout_http_requests_total', { route: '/sandbox/v1.0/removebg', status: '200' }), 1);
  t.equal(delta('cutout_http_requests_total', { route: '/sandbox/v1.0/removebg', status: '429' }), 1);
  t.equal(delta('cutout_http_requests_total', { route: '/metrics', status: '200' }), 1, 'the first scrape is counted once it ended');
  t.equal(delta('cutout_http_request_duration_seconds', { route: '/v1.0/removebg' }), 4, 'one observation per request');
  t.equal(delta('cutout_credits_charged_total'), 2);
  t.equal(delta('cutout_sandbox_requests_total'), 2);
  t.equal(delta('cutout_rejections_total', { reason: 'insufficient_credits' }), 1);
  t.equal(delta('cutout_rejections_total', { reason: 'sandbox_rate' }), 1);
  t.equal(value(after, 'cutout_queue_depth'), 0);
  t.equal(value(after, 'cutout_in_flight'), 0);
  t.equal(value(after, 'cutout_build_info', { version: '9.9.9-test' }), 1);
  // The process's page faults: the server runs in this test's process, so they are ours, and only grow.
  t.equal(after.get('process_minor_page_faults_total')?.type, 'COUNTER');
  t.ok(delta('process_minor_page_faults_total') > 0, 'minor page faults counted while requests ran');
  t.ok(value(after, 'process_minor_page_faults_total') <= process.resourceUsage().minorPageFault, 'read from getrusage at scrape time');
  t.equal(after.get('process_major_page_faults_total')?.type, 'COUNTER');
  t.equal(after.get('cutout_http_request_duration_seconds')?.type, 'HISTOGRAM');
  t.equal(after.get('cutout_stage_duration_seconds')?.type, 'HISTOGRAM');
  t.notOk(after.has('cutout_batch_size'), 'no batching on this pool: no batch histogram');
  t.notOk(after.has('cutout_batch_run_seconds'), 'nor batch run times');
  const inf = /^cutout_http_request_duration_seconds_bucket\{le="\+Inf",route="\/v1\.0\/removebg"\} (\d+)$/m.exec(after.text);
  t.equal(Number(inf?.[1]), value(after, 'cutout_http_request_duration_seconds', { route: '/v1.0/removebg' }), 'the +Inf bucket holds every observation');
});

t.test('stage histograms are fed from the worker timings of successful removals', async (t) => {
  const { url, pool } = await startWithMetrics(t);
  pool.respond = (task) => ({
    ok: true,
    data: task.input,
    contentType: 'image/png',
    width: 10,
    height: 10,
    inputWidth: 10,
    inputHeight: 10,
    foreground: { top: 0, left: 0, width: 10, height: 10 },
    timings: { queue: 2, probe: 1, decode: 9, infer: 250, composite: 40, encode: 60, total: 362 },
  });
  const auth = { Authorization: `Bearer ${TOKEN}` };
  t.equal((await postImage(url, await makeImage('png'))).status, 200);
  const after = await scrape(url, auth);
  const sum = (stage: string) => value(after, 'cutout_stage_duration_seconds', { stage }, 'sum');
  t.equal(sum('decode'), 0.01);
  t.equal(sum('inference'), 0.25);
  t.equal(sum('composite'), 0.04);
  t.equal(sum('encode'), 0.06);
  t.equal(sum('queue'), 0.002);
});

t.test('the batch histograms count each inference batch and its run time by bucket', async (t) => {
  const metrics = createMetrics('1');
  const pool = new FakePool();
  Object.assign(pool, {
    info: {
      device: { kind: 'cuda', index: 0, label: 'cuda:0', reason: 'test' },
      model: 'batchy',
      workers: 4,
      threadsPerWorker: 1,
      batching: { maxBatch: 8, maxWaitMs: 2, inferWorkers: 2 },
    },
  });
  metrics.attachPool(pool);
  metrics.observeBatch({ size: 3, bucket: 4, ms: 30 });
  metrics.observeBatch({ size: 8, bucket: 8, ms: 55 });
  metrics.observeBatch({ size: 4, bucket: 4, ms: 20 });
  metrics.observeBatch({ size: 2 }); // a failed run: its size counts, no run time
  const f = parsed(await metrics.render());
  t.equal(value(f, 'cutout_batch_size'), 4);
  t.equal(value(f, 'cutout_batch_size', {}, 'sum'), 17);
  t.equal(value(f, 'cutout_batch_run_seconds', { bucket: '4' }), 2);
  t.equal(value(f, 'cutout_batch_run_seconds', { bucket: '4' }, 'sum'), 0.05);
  t.equal(value(f, 'cutout_batch_run_seconds', { bucket: '8' }, 'sum'), 0.055);
  t.equal(value(f, 'cutout_build_info', { model: 'batchy', device: 'cuda:0' }), 1);
});

t.test('a token is asked for when set: missing, wrong or malformed bearer → 401', async (t) => {
  const { url } = await startWithMetrics(t);
  const wrong: Array<Record<string, string>> = [
    {},
    { Authorization: TOKEN },
    { Authorization: 'Bearer' },
    { Authorization: 'Bearer ' },
    { Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
    { Authorization: `Bearer ${TOKEN}x` },
    { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    { Authorization: `Bearer ${TOKEN} extra` },
    { Authorization: `Bearer ${'A'.repeat(8000)}` },
    { Authorization: `Bearer ${TOKEN.toUpperCase()}` },
    { 'X-Api-Key': KEY },
  ];
  for (const headers of wrong) {
    const res = await request(`${url}/metrics`, { headers });
    t.equal(res.status, 401, JSON.stringify(headers).slice(0, 60));
    t.equal(firstError(res).code, 'auth_failed');
    t.equal(res.headers['www-authenticate'], 'Bearer realm="cutout metrics"');
    t.notMatch(res.text(), /cutout_/, 'no metric leaks');
  }
  t.equal((await request(`${url}/metrics`, { headers: { Authorization: `bearer ${TOKEN}` } })).status, 200, 'the scheme is case-insensitive');
});

t.test('no token: open on a loopback bind, 403 on any other', async (t) => {
  const metrics = createMetrics('1');
  const loop = await startTestServer(t, { metrics, config: { host: '127.0.0.1' } });
  const open = await request(`${loop.url}/metrics`);
  t.equal(open.status, 200);
  t.match(open.text(), /^# HELP cutout_http_requests_total/m);

  const wide = await startTestServer(t, { metrics, config: { host: '0.0.0.0' } });
  const refused = await request(`${wide.url}/metrics`); // reached over loopback, but the bind is not
  t.equal(refused.status, 403);
  t.equal(firstError(refused).code, 'metrics_disabled');
  t.match(firstError(refused).detail, /--metrics-token \(CUTOUT_METRICS_TOKEN\)/);
});
