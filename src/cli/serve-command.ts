// `cutout serve [options]` (cutout serve --help lists them)
// Start order: TLS files checked → ledger (LMDB in --data, or PostgreSQL: migrations; then reconcile
// dead owners or lapsed leases, demo key) → pool → listen.
// SIGTERM/SIGINT close in reverse: stop accepting, drain in-flight requests to their answers' last
// byte (at most --drain-timeout, then their connections are closed), close pool, close ledger. A second signal
// exits at once (the next start refunds what was held).

import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError, loadConfig, minBodyMemoryBytes, type Config } from '../config.js';
import type { FetchImageOptions } from '../fetch/image-url.js';
import type { LedgerBackend, ReconcileReport } from '../ledger/ledger.js';
import { openLedger } from '../ledger/open-ledger.js';
import { redactUrl } from '../domain/ledger-url.js';
import { listeningLine, localHint } from './listen-line.js';
import { describeModelWarnings } from './model-warnings.js';
import type { PoolOptions, RemovalPool } from '../pool/pool-api.js';
import { createRemovalPool } from '../pool/pool.js';
import { estimateMemory, formatMemoryEstimate } from '../pool/memory-estimate.js';
import { createServer, consoleLogger, type CutoutServer, type Logger } from '../http/server.js';
import { assertNativeUws, FallbackUwsError } from '../http/native-check.js';
import { checkTlsFiles, TlsFileError } from '../http/tls.js';
import { RECONCILE_MESSAGE, runSupervisor } from './supervisor.js';
import { GroupHub } from './group-hub.js';
import { GroupClient } from '../process/group-client.js';
import { groupMetrics } from '../observe/group-metrics.js';
import { GroupWindow } from '../api/group-window.js';
import { apiFactory } from '../api/routes.js';
import { ClientWindow } from '../api/client-window.js';
import { collectGarbage } from '../process/collect-garbage.js';
import { memoryLimit, type MemoryLimit } from '../process/memory-limit.js';
import { MemoryPressure } from '../process/memory-pressure.js';
import { portTaken } from '../process/port-taken.js';
import { describeMetricsAccess } from '../api/metrics-endpoint.js';
import { SANDBOX_PATH } from '../api/sandbox.js';
import { describeModelLicense, PACKAGE_ROOT } from '../model/manifest.js';
import { createMetrics, type Metrics } from '../observe/metrics.js';
import { createRequestLog, type RequestLog } from '../observe/request-log.js';

export const SERVE_USAGE = `Usage: cutout serve [options]

  --host HOST          interface to bind (CUTOUT_HOST, default 0.0.0.0)
  --port PORT          port, 0 = any free port (CUTOUT_PORT, default 8080)
  --data DIR           ledger and improve/ storage (CUTOUT_DATA_DIR, default ./data)
  --workers N          removal worker threads per process (CUTOUT_WORKERS; default cores/2 on the CPU
                       path, every core for the photo work of a batch model)
  --model NAME         model from models/manifest.json (CUTOUT_MODEL, default: the manifest's default)
  --model-file PATH    an ONNX segmentation model of your own instead (CUTOUT_MODEL_FILE; not with --model),
                       checked against its family at start (docs/models.md, "A model of your own")
  --model-family F     isnet | u2net | birefnet | rmbg | custom: the model file's conventions
                       (CUTOUT_MODEL_FAMILY, default: the descriptor's "family")
  --model-descriptor P the model file's JSON descriptor (CUTOUT_MODEL_DESCRIPTOR, default: PATH.json
                       beside the file when there is one; family custom needs one)
  --quality Q          what each removal may spend on its edges (CUTOUT_QUALITY, default balanced):
                       fast: the model's mask upscaled, no edge stages (~0.8x the time of balanced
                       on a 12 MP photo); balanced: + guided refinement, matting and foreground
                       colour; best: + the mirrored photo through the model where the mask is unsure
                       (~1.6-2.2x balanced on a CPU: one more inference; balanced on a GPU for now).
                       Figures: docs/performance.md, "Quality levels"
  --device D           auto | cpu | cuda | cuda:N (CUTOUT_DEVICE, default auto: CUDA when its provider
                       libraries and a GPU are present, else the CPU; an explicit cuda never falls back)
  --processes N        server processes sharing the port via SO_REUSEPORT (CUTOUT_PROCESSES, default 1)
  --max-queue N        removals waiting per process before 503 service_busy (CUTOUT_MAX_QUEUE, default 64)
  --max-batch N        batch models (the CUDA default): most photos per inference batch (CUTOUT_MAX_BATCH, default 8)
  --batch-wait-ms MS   batch models: how long a free inference worker waits for a batch to fill, while
                       other photos are being prepared (CUTOUT_BATCH_WAIT_MS, default 2)
  --infer-workers N    batch models: inference workers sharing the model session, 1..8
                       (CUTOUT_INFER_WORKERS, default 1)
  --photo-nice N       nice value 0..19 of the photo workers' threads, so the main thread and the
                       inference workers go first when the cores are full (CUTOUT_PHOTO_NICE, default 0;
                       an experiment for GPU boxes: docs/gpu.md)
  --memory-release M   idle | every-task: the photo workers keep their memory mapped while requests
                       keep coming and hand it back after 3 s idle, or hand it back after every
                       request: a smaller footprint while busy, slower requests (CUTOUT_MEMORY_RELEASE,
                       default idle, or every-task where the memory limit needs it; docs/memory.md).
                       The workers and this are sized to the cgroup's memory limit (or the host's
                       memory); a --workers or --memory-release that cannot fit is refused
  --request-timeout S  deadline of every request in seconds, from its first byte: 408 while the
                       body is still arriving, 503 + Retry-After after, credits refunded
                       (CUTOUT_REQUEST_TIMEOUT, default 120)
  --drain-timeout S    on SIGTERM/SIGINT, how long in-flight requests may finish, their answers
                       taken by the clients, before their connections are closed (refunded; an
                       answer cut is logged); 0 = at once (CUTOUT_DRAIN_TIMEOUT, default 30).
                       A second signal exits at once
  --tls-cert FILE      serve HTTPS with this PEM certificate (CUTOUT_TLS_CERT)
  --tls-key FILE       ... and this unencrypted PEM private key (CUTOUT_TLS_KEY)
  --max-body-bytes N   largest request body (CUTOUT_MAX_BODY_BYTES)
  --fetch-timeout-ms MS  image_url / bg_image_url download limit in ms (CUTOUT_FETCH_TIMEOUT_MS, default 20000)
  --body-memory-bytes N  request bodies and downloaded images held in memory at once before 503
                       (CUTOUT_BODY_MEMORY_BYTES, default 256 MB, lowered to fit a memory limit);
                       the sandbox's bodies hold 1/8 of it, an address's 1/16, a key's its
                       concurrency cap x --max-body-bytes (429 beyond a share)
  --improve-quota-bytes N  /v1.0/improve storage per account (CUTOUT_IMPROVE_QUOTA_BYTES, default 100 MB)
  --durability D       periodic | fsync: ledger commits flushed every second, or each one (CUTOUT_DURABILITY, default periodic)
  --sandbox on|off     POST /sandbox/v1.0/removebg: the API without a key, at preview size, free (CUTOUT_SANDBOX, default on)
  --sandbox-rate-per-minute N  sandbox requests per client address (IPv6: per /64) a minute before 429
                       (CUTOUT_SANDBOX_RATE_PER_MINUTE, default 10)
  --sandbox-share N    pool places (running + waiting) sandbox removals may hold per process; they wait
                       behind every keyed request (CUTOUT_SANDBOX_SHARE, default 2)
  --trust-proxy        the client address is the last X-Forwarded-For entry (behind a reverse proxy;
                       CUTOUT_TRUST_PROXY)
  --metrics-token T    GET /metrics asks for Authorization: Bearer T (16+ characters; CUTOUT_METRICS_TOKEN,
                       better than the flag: ps shows flags). Without one, /metrics is served only on a
                       loopback --host
  --ledger URL         postgres://user:password@host:port/database: keys, credits, slots and rate windows in
                       PostgreSQL, shared by every node (CUTOUT_LEDGER_URL; default: LMDB in --data)
  --ledger-lease S     PostgreSQL ledger: a dead node's slots and holds come back within S seconds; renewed
                       every S/3 (CUTOUT_LEDGER_LEASE, default 30)
  --no-demo-key        do not create a demo key on first start
`;

export interface RunningService {
  server: CutoutServer;
  metrics: Metrics;
  pool: RemovalPool;
  ledger: LedgerBackend;
  demoKey: string | null;
  /** Refund holds and free slots of dead processes or lapsed leases (a supervisor asks after a crash). */
  reconcile(): Promise<ReconcileReport>;
  /** Graceful stop; idempotent. */
  shutdown(): Promise<void>;
}

/** The version in package.json, for the build-info metric. */
function packageVersion(): string {
  try {
    return String((JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/** `sandbox: POST /sandbox/v1.0/removebg on: …` or `sandbox: off …`, for the start-up output. */
export function describeSandbox(config: Config): string {
  if (!config.sandbox) return `sandbox: off (${SANDBOX_PATH} answers 404; --sandbox on to serve it)`;
  return (
    `sandbox: POST ${SANDBOX_PATH} on: no key, preview size, 0 credits; ${config.sandboxRatePerMinute} requests/min per client address` +
    `${config.trustProxy ? ' (from X-Forwarded-For)' : ''}, at most ${config.sandboxShare} pool place${config.sandboxShare === 1 ? '' : 's'} (running + waiting), behind keyed requests`
  );
}

/** What a program starting the service may add that no flag or env var can (the CLI passes none). */
export interface ServiceOptions {
  /** Overrides for image_url fetching, e.g. a test's `allowLoopback` for its image host on 127.0.0.1. */
  fetchOptions?: Partial<FetchImageOptions>;
}

/** ServiceOptions, and for `--processes N` the module each process runs. */
export interface ServeCommandOptions extends ServiceOptions {
  /**
   * Module the supervisor forks for each process (given the serve flags without the verb), so the
   * processes start with the same ServiceOptions as this one; default the cutout CLI.
   */
  childEntry?: URL;
}

/** The pool's options from the config, sized to `limit` (what this process may use). */
function poolOptionsFor(config: Config, limit: MemoryLimit): PoolOptions {
  const poolOptions: PoolOptions = {};
  if (config.workers !== undefined) poolOptions.workers = config.workers;
  if (config.model !== undefined) poolOptions.model = config.model;
  if (config.modelFile !== undefined) poolOptions.modelFile = config.modelFile;
  if (config.modelFamily !== undefined) poolOptions.modelFamily = config.modelFamily;
  if (config.modelDescriptor !== undefined) poolOptions.modelDescriptor = config.modelDescriptor;
  poolOptions.quality = config.quality;
  poolOptions.device = config.device;
  if (config.maxQueue !== undefined) poolOptions.maxQueue = config.maxQueue;
  if (config.maxBatch !== undefined) poolOptions.maxBatch = config.maxBatch;
  if (config.batchWaitMs !== undefined) poolOptions.batchWaitMs = config.batchWaitMs;
  if (config.inferWorkers !== undefined) poolOptions.inferWorkers = config.inferWorkers;
  if (config.photoNice !== undefined) poolOptions.photoNice = config.photoNice;
  if (config.memoryRelease !== undefined) poolOptions.memoryRelease = config.memoryRelease;
  poolOptions.memoryLimit = limit;
  // Not given: sized with the pool, never below config's own floor.
  poolOptions.inputs = config.bodyMemoryGiven
    ? { bytes: config.bodyMemoryBytes, given: true }
    : { bytes: minBodyMemoryBytes(config.maxBodyBytes), given: false };
  poolOptions.lowPriorityPlaces = config.sandboxShare;
  return poolOptions;
}

/**
 * Open everything and listen. Exposed for tests; the CLI wraps it with signal handling. `requestLog`
 * gets one line per request (the CLI's writes to stdout; none when absent).
 */
export async function startService(
  config: Config,
  log: Logger = consoleLogger,
  requestLog?: RequestLog,
  options: ServiceOptions = {},
): Promise<RunningService> {
  assertNativeUws(); // before opening anything: never serve on uWS's slow JS fallback
  if (config.tlsCert && config.tlsKey) checkTlsFiles(config.tlsCert, config.tlsKey); // before the model loads
  const dataDir = resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });

  const logReconciled = (report: ReconcileReport, whose: string) => {
    if (report.holds > 0 || report.slots > 0) log.info(`ledger: refunded ${report.holds} hold(s) and freed ${report.slots} slot(s) of ${whose}`);
  };
  const ledger = await openLedger({
    url: config.ledgerUrl,
    dataDir,
    durability: config.durability,
    leaseMs: config.ledgerLeaseMs,
    onReconcile: (report) => logReconciled(report, 'lapsed leases'),
    onError: (err) => log.error(`ledger: ${err.message}`),
  });
  let pool: RemovalPool | undefined;
  try {
    // Refund holds and free slots left by processes (LMDB) or nodes (PostgreSQL) that died mid-request.
    const reconcile = async () => {
      const report = await ledger.reconcile();
      logReconciled(report, ledger.kind === 'lmdb' ? 'dead processes' : 'lapsed leases');
      return report;
    };
    await reconcile();
    const demoKey = config.demoKey ? await ledger.ensureDemoKey() : null;

    // ONNX Runtime 1.29's own telemetry (a device id and event database under ~/.cache, an empty
    // /tmp/mat-debug-<pid>.log per process: docs/native.md) stays off unless the operator set the
    // variable. Set here, on the main thread, before any worker loads the library.
    if (!process.env.ORT_DISABLE_TELEMETRY) process.env.ORT_DISABLE_TELEMETRY = '1';

    const limit = processMemoryLimit();
    const poolOptions = poolOptionsFor(config, limit);
    const metrics = createMetrics(packageVersion());
    poolOptions.onBatch = (batch) => metrics.observeBatch(batch);
    pool = await createRemovalPool(poolOptions);
    metrics.attachPool(pool);

    const observers = requestLog ? [metrics, requestLog] : [metrics];
    // The processes of --processes N report one group's metrics and share one sandbox window.
    const group = isSupervisedProcess() ? new GroupClient(process) : null;
    const shared = group && {
      metrics: groupMetrics(metrics, group),
      sandboxWindow: new GroupWindow(group, new ClientWindow(config.sandboxRatePerMinute)),
    };
    const memoryPressure = new MemoryPressure(limit.bytes);
    // The bodies-in-memory budget as fitted beside the pool (the operator's own when given).
    const served = { ...config, bodyMemoryBytes: pool.info?.inputCeilingBytes ?? config.bodyMemoryBytes };
    const api = apiFactory({ config: served, pool, ledger, metrics, ...shared, fetchOptions: options.fetchOptions });
    const server = createServer({ config: served, api, log, observers, memoryPressure, sharePort: group !== null });
    await server.listen();
    // Start-up garbage (module sources, config parsing, the ledger's first reads) goes now rather
    // than at the first busy moment; the workers did the same after loading the model.
    collectGarbage();
    const openPool = pool;
    let stopping: Promise<void> | null = null;
    return {
      server,
      metrics,
      pool: openPool,
      ledger,
      demoKey,
      reconcile,
      shutdown() {
        stopping ??= (async () => {
          await server.close();
          group?.close();
          requestLog?.flush();
          await openPool.close();
          await ledger.close();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await pool?.close().catch(() => {});
    await ledger.close().catch(() => {});
    throw err;
  }
}

/** How soon after a signal npm's forwarded copy of it arrives, at most (runServeCommand). */
const NPM_FORWARD_MS = 500;

/**
 * True when this process's parent is npm or npx: its command line starts with npm, npx, npm-cli.js or
 * npx-cli.js (npm sets its process title, so /proc shows "npm start …" as one string).
 */
function parentIsNpm(): boolean {
  try {
    const argv = readFileSync(`/proc/${process.ppid}/cmdline`, 'utf8').split('\0');
    return argv.slice(0, 2).some((a) => /(^|\/)(npm|npx)(-cli\.js)?(\s|$)/.test(a));
  } catch {
    return false; // no /proc (not Linux), or the parent is gone
  }
}

/** `cutout serve …`: resolves with the process exit code once the server has shut down. */
export async function runServeCommand(argv: string[], options: ServeCommandOptions = {}): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const config = parseServeConfig(argv);
  if (typeof config === 'number') return config;
  const refused = await checkBeforeStart(config);
  if (refused !== null) return refused;
  if (config.processes > 1) {
    const hub = new GroupHub({ sandboxRatePerMinute: config.sandboxRatePerMinute });
    const childArgs = stripFlag(argv, 'processes');
    // The default entry is the CLI, to which the supervisor adds `serve` and `--processes 1` itself.
    if (!options.childEntry) return runSupervisor({ count: config.processes, childArgs, hub });
    return runSupervisor({ count: config.processes, childArgs: [...childArgs, '--processes', '1'], entry: options.childEntry, hub });
  }

  let service: RunningService;
  try {
    service = await startService(config, consoleLogger, createRequestLog(), { fetchOptions: options.fetchOptions });
  } catch (err) {
    if (err instanceof FallbackUwsError) {
      process.stderr.write(`cutout serve: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`cutout serve: failed to start: ${(err as Error).message}\n`);
    return 1;
  }
  printStarted(service, config);
  return serveUntilStopped(service);
}

/** The config from flags and environment, or exit code 2 after one line on what is wrong. */
function parseServeConfig(argv: string[]): Config | number {
  try {
    return loadConfig(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      // One line and where the options are, not the whole --help under it.
      process.stderr.write(`cutout serve: ${err.message}\nRun 'cutout serve --help' for every option, its environment variable and its default.\n`);
      return 2;
    }
    throw err;
  }
}

/** What ends a start at once, before any process is forked or anything is opened: exit code 1, else null. */
async function checkBeforeStart(config: Config): Promise<number | null> {
  if (config.tlsCert && config.tlsKey) {
    // Before the supervisor forks or the model loads: a bad file is named at once, not per process.
    try {
      checkTlsFiles(config.tlsCert, config.tlsKey);
    } catch (err) {
      if (!(err instanceof TlsFileError)) throw err;
      process.stderr.write(`cutout serve: ${err.message}\n`);
      return 1;
    }
  }

  // Before the ledger and the model: a port another server holds ends the start at once. The
  // processes of --processes N share theirs (SO_REUSEPORT), so none of them could tell otherwise.
  // A supervised process skips it: its siblings hold the port already.
  const taken = isSupervisedProcess() ? null : await portTaken(config.host, config.port);
  if (taken) {
    process.stderr.write(`cutout serve: failed to start: Could not listen on ${config.host}:${config.port} (${taken})\n`);
    return 1;
  }
  return null;
}

/** The start-up output: demo key, device and model, where it listens, memory, sandbox, metrics. */
function printStarted(service: RunningService, config: Config): void {
  if (service.demoKey) process.stdout.write(`Demo API key (shown once): ${service.demoKey}\n`);
  process.stdout.write(`${describePool(service.pool)}\n`);
  if (service.pool.info)
    process.stdout.write(`${describeModelFacts(service.pool)}\n${describeModelLicense(service.pool.info.model, service.pool.info.ownModelFile)}\n`);
  for (const line of describeModelWarnings(service.pool, 'cutout serve')) process.stderr.write(`${line}\n`);
  const ledgerAt = config.ledgerUrl ? `; ledger: ${redactUrl(config.ledgerUrl)}` : '';
  process.stdout.write(
    `${listeningLine(service.server.url, config.host, service.server.port)} (data: ${resolve(config.dataDir)}${ledgerAt})${localHint(service.server.url, config.host)}\n`,
  );
  const release = service.pool.info?.memoryRelease;
  process.stdout.write(
    `${formatMemoryEstimate(estimateMemory(service.pool.info?.modelFileSize ?? service.pool.info?.model ?? config.model, service.pool.stats().workers, release))}\n`,
  );
  if (service.pool.info?.memoryFit) process.stdout.write(`memory limit: ${service.pool.info.memoryFit}\n`);
  process.stdout.write(`${describeSandbox(config)}\n`);
  process.stdout.write(`${describeMetricsAccess({ token: config.metricsToken, host: config.host })}\n`);
}

/**
 * Serves until SIGTERM/SIGINT (a drain, then exit code 0), a second signal (exit at once), or, for a
 * process of `--processes N`, its supervisor's disappearance; reconciles when the supervisor asks.
 */
function serveUntilStopped(service: RunningService): Promise<number> {
  // A process of `--processes N` leaves the second signal to its supervisor: Ctrl-C and systemd
  // signal the whole process group, so it gets each signal twice (directly and forwarded).
  const supervised = isSupervisedProcess();
  // Under `npm start` (bin/cutout exec'd into this process, npm our parent) npm forwards the signals it
  // gets to us, so Ctrl-C arrives twice at once: from the terminal and from npm. The same signal again
  // within NPM_FORWARD_MS of the first is that copy, not a person asking for an exit without the drain.
  const underNpm = parentIsNpm();
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  return new Promise<number>((resolveExit) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      if (underNpm && first?.signal === signal && performance.now() - first.at < NPM_FORWARD_MS) return;
      first ??= { signal, at: performance.now() };
      signals++;
      if (signals > 1) {
        if (supervised) return;
        // Now, not after the drain: uWS's sockets and the pool would keep the loop alive. Credits
        // still held by requests in flight are refunded by the next start's reconciliation.
        process.stderr.write(`cutout serve: second ${signal}, exiting now\n`);
        process.exit(130);
      }
      process.stdout.write(`cutout serve: ${signal} received, finishing ${service.server.inflight} in-flight request(s)\n`);
      service.shutdown().then(
        () => {
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          // The IPC channel to a supervisor would keep this process alive.
          process.off('disconnect', orphaned);
          process.off('message', onMessage);
          if (process.connected) process.disconnect();
          process.stdout.write('cutout serve: stopped\n');
          resolveExit(0);
        },
        (err) => {
          process.stderr.write(`cutout serve: error while stopping: ${(err as Error).message}\n`);
          resolveExit(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // A child of `--processes N` stops when its supervisor disappears (even by SIGKILL), rather
    // than serving on as an orphan nobody supervises.
    const orphaned = () => onSignal('SIGTERM');
    // After another process of the group crashed, its supervisor asks the live ones to give back
    // what the dead one held (credits, slots) without waiting for its replacement to start.
    const onMessage = (m: unknown) => {
      if ((m as { type?: unknown })?.type !== RECONCILE_MESSAGE.type || signals > 0) return;
      service.reconcile().catch((err: Error) => process.stderr.write(`cutout serve: reconciling the ledger failed: ${err.message}\n`));
    };
    if (supervised) {
      process.once('disconnect', orphaned);
      process.on('message', onMessage);
    }
  });
}

/**
 * What this process may use (src/process/memory-limit.ts); one of `--processes N` counts on an Nth of
 * it, since its siblings read the same limit (their supervisor says how many: CUTOUT_PROCESS_COUNT).
 */
function processMemoryLimit(): MemoryLimit {
  const limit = memoryLimit();
  const sharing = isSupervisedProcess() ? Number(process.env.CUTOUT_PROCESS_COUNT ?? '1') : 1;
  if (!Number.isInteger(sharing) || sharing <= 1) return limit;
  return { bytes: limit.bytes / sharing, source: `${limit.source}, shared by ${sharing} processes` };
}

/** A process of `serve --processes N`, started by its supervisor (supervisor.ts). */
export function isSupervisedProcess(): boolean {
  return process.send !== undefined && process.env.CUTOUT_PROCESS_INDEX !== undefined;
}

/** `device: cpu (no CUDA provider installed …); model isnet-int8; 1 worker × 2 threads`. */
export function describePool(pool: RemovalPool): string {
  const i = pool.info;
  if (!i) return 'device: unknown';
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  const head = `device: ${i.device.label} (${i.device.reason}); model ${i.model}`;
  if (!i.batching) return `${head}; ${plural(i.workers, 'worker')} × ${plural(i.threadsPerWorker, 'thread')}`;
  const b = i.batching;
  return `${head}; batches of up to ${b.maxBatch} (wait ≤ ${b.maxWaitMs} ms) on ${plural(b.inferWorkers, 'inference worker')}; ${plural(i.workers, 'photo worker')}`;
}

/**
 * `model isnet-int8: family isnet, sha256 19b5…`, and on a GPU, that a model run one photo at a time
 * does not batch across requests (and why, for a model file with a fixed batch).
 */
export function describeModelFacts(pool: RemovalPool): string {
  const i = pool.info;
  if (!i) return 'model: unknown';
  const line = `model ${i.model}: family ${i.modelFamily ?? 'unknown'}, sha256 ${i.modelSha256 ?? 'not recorded'}`;
  if (i.device.kind !== 'cuda' || i.batching) return line;
  const why = i.modelBatch === 'fixed' ? "the file's batch dimension is fixed at 1" : 'no batching across requests on this path';
  return `${line}; one photo per inference run (${why})`;
}

function stripFlag(argv: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === `--${name}`) i++;
    else if (!a.startsWith(`--${name}=`)) out.push(a);
  }
  return out;
}
