// The service's Prometheus metrics (prom-client, one registry per server): requests by route and
// status, whole-request and per-stage latency, the pool's queue and running work, inference batch
// sizes and run times, credits, sandbox calls, refusals, and a build-info gauge. Every update is O(1) at the end of
// a request; the pool's gauges are read at scrape time. Names are a contract with the deployment
// files: change none without them (docs/http.md, "Metrics").

import { Counter, Gauge, Histogram, Registry } from './prom.js';
import type { MetricsSource } from '../api/metrics-endpoint.js';
import { SANDBOX_PATH } from '../api/sandbox.js';
import type { RequestInfo, RequestObserver } from '../http/server.js';
import type { BatchReport, RemovalPool } from '../pool/pool-api.js';
import type { MetricJson } from './metrics-merge.js';
import { stageMs } from './stages.js';

export interface Metrics extends MetricsSource, RequestObserver {
  /** One inference batch ran or failed (the staged GPU path's PoolOptions.onBatch). */
  observeBatch(batch: BatchReport): void;
  /** The pool whose queue the gauges read, and whose model and device build info names. */
  attachPool(pool: RemovalPool): void;
  /** This process's registry as data (for the group's merged scrape with --processes N). */
  snapshot(): Promise<MetricJson[]>;
}

/** Statuses counted as refusals (cutout_rejections_total): out of credits, a limit, busy. */
const REFUSALS = new Set([402, 429, 503]);

/** The process's page faults so far (all threads). */
export interface PageFaults {
  minorPageFault: number;
  majorPageFault: number;
}

/** Where each metric registers itself: this server's registry. */
type Registers = InstanceType<typeof Registry>[];

/** Requests by route and status, whole-request latency by route, and the stages of successful removals. */
function requestMetrics(registers: Registers) {
  const requests = new Counter({
    name: 'cutout_http_requests_total',
    help: 'HTTP requests by route (the route table path, "unmatched" for unknown paths) and status (0: the client left first).',
    labelNames: ['route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'cutout_http_request_duration_seconds',
    help: 'Whole request, from its first byte to its end, by route.',
    labelNames: ['route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const stages = new Histogram({
    name: 'cutout_stage_duration_seconds',
    help: 'Time of each stage of a successful removal: queue, decode, inference, composite, encode.',
    labelNames: ['stage'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  return { requests, duration, stages };
}

/** The pool's queue and running work, read at scrape time from whichever pool is attached then. */
function poolGauges(registers: Registers, poolOf: () => RemovalPool | undefined): void {
  new Gauge({
    name: 'cutout_queue_depth',
    help: 'Removals waiting for a worker.',
    registers,
    collect() {
      this.set(poolOf()?.stats().queued ?? 0);
    },
  });
  new Gauge({
    name: 'cutout_in_flight',
    help: 'Removals running on the workers.',
    registers,
    collect() {
      this.set(poolOf()?.stats().running ?? 0);
    },
  });
}

/** Batch sizes and run times; registered only where batching exists (attachPool): a CPU pool shows no empty histogram. */
function batchMetrics() {
  const batches = new Histogram({
    name: 'cutout_batch_size',
    help: 'Photos per inference batch (batch models, the GPU path).',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [],
  });
  // The model run of each batch by the bucket it was padded to: sum ÷ count ÷ bucket is the GPU's
  // time per image in service, to set beside bench:gpu-check's alone (docs/gpu.md).
  const batchRuns = new Histogram({
    name: 'cutout_batch_run_seconds',
    help: 'Wall time of each inference batch run (batch models, the GPU path), by the bucket it was padded to.',
    labelNames: ['bucket'] as const,
    buckets: [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [],
  });
  return { batches, batchRuns };
}

/** Credits charged, sandbox calls, and refusals by reason. */
function outcomeCounters(registers: Registers) {
  const credits = new Counter({ name: 'cutout_credits_charged_total', help: 'Credits charged for successful removals.', registers });
  const sandbox = new Counter({ name: 'cutout_sandbox_requests_total', help: 'Requests to POST /sandbox/v1.0/removebg, whatever their outcome.', registers });
  const rejections = new Counter({
    name: 'cutout_rejections_total',
    help: 'Requests refused with 402, 429 or 503, by reason (the error code, or sandbox_rate / sandbox_share).',
    labelNames: ['reason'] as const,
    registers,
  });
  return { credits, sandbox, rejections };
}

/**
 * Page faults of the whole process (every thread), read at scrape time: prom-client's default
 * process metrics have none. A minor fault is a page touched for the first time since it was
 * mapped; under load they should stay near zero per request (docs/memory.md, "Hot while busy, lean
 * when idle").
 */
function pageFaultCounters(registers: Registers, readFaults: () => PageFaults): void {
  for (const [kind, field] of [
    ['minor', 'minorPageFault'],
    ['major', 'majorPageFault'],
  ] as const) {
    new Counter({
      name: `process_${kind}_page_faults_total`,
      help: `${kind === 'minor' ? 'Minor' : 'Major'} page faults of this process since it started, all threads (getrusage).`,
      registers,
      collect() {
        this.reset();
        this.inc(readFaults()[field]);
      },
    });
  }
}

function buildInfoGauge(registers: Registers) {
  return new Gauge({
    name: 'cutout_build_info',
    help: "Always 1: the version, model (its family and file's sha256) and inference device this process serves with.",
    labelNames: ['version', 'model', 'device', 'model_family', 'model_sha256'] as const,
    // Merged across processes it stays 1 (the others sum).
    aggregator: 'max',
    registers,
  });
}

/** `readFaults`: where the page-fault counters read from (getrusage; tests pass fixed counts). */
export function createMetrics(version: string, readFaults: () => PageFaults = () => process.resourceUsage()): Metrics {
  const registry = new Registry();
  const registers = [registry];
  let pool: RemovalPool | undefined;
  // Registered in this order, which is the order a scrape lists them in.
  const { requests, duration, stages } = requestMetrics(registers);
  poolGauges(registers, () => pool);
  const { batches, batchRuns } = batchMetrics();
  const { credits, sandbox, rejections } = outcomeCounters(registers);
  pageFaultCounters(registers, readFaults);
  const buildInfo = buildInfoGauge(registers);

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    snapshot: () => registry.getMetricsAsJSON() as unknown as Promise<MetricJson[]>,
    attachPool(p) {
      pool = p;
      buildInfo.reset();
      buildInfo.set(
        {
          version,
          model: p.info?.model ?? 'unknown',
          device: p.info?.device.label ?? 'unknown',
          model_family: p.info?.modelFamily ?? 'unknown',
          model_sha256: p.info?.modelSha256 ?? 'unknown',
        },
        1,
      );
      if (p.info?.batching && !registry.getSingleMetric('cutout_batch_size')) {
        registry.registerMetric(batches);
        registry.registerMetric(batchRuns);
      }
    },
    observeBatch(batch) {
      batches.observe(batch.size);
      if (batch.bucket !== undefined && batch.ms !== undefined) batchRuns.observe({ bucket: String(batch.bucket) }, batch.ms / 1000);
    },
    onRequestEnd(info: RequestInfo) {
      const route = info.route ?? 'unmatched';
      requests.inc({ route, status: String(info.status) });
      duration.observe({ route }, info.durationMs / 1000);
      if (route === SANDBOX_PATH) sandbox.inc();
      if (REFUSALS.has(info.status)) rejections.inc({ reason: info.notes.rejection ?? info.errorCode ?? String(info.status) });
      if (info.status !== 200) return;
      const charged = info.notes.creditsCharged ?? 0;
      if (charged > 0) credits.inc(charged);
      const ms = stageMs(info.notes.timings);
      for (const stage in ms) stages.observe({ stage }, ms[stage as keyof typeof ms]! / 1000);
    },
  };
}
