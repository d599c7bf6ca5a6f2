// Environment + command-line flags → one frozen, validated Config. Imports only the device, durability,
// ledger URL, memory-release and model-family parsers and the domain's image size limit.
// Flags win over env vars; env vars win over defaults.

import { DeviceError, parseDevice, type DeviceRequest } from './domain/device-request.js';
import { DEFAULT_DURABILITY, parseDurability, type Durability } from './domain/durability.js';
import { parseLedgerUrl } from './domain/ledger-url.js';
import { DEFAULT_QUALITY, MAX_INPUT_BYTES, MAX_INPUT_BYTES_IN_MEMORY, parseQuality, QUALITY_LEVELS, type QualityLevel } from './domain/removal.js';
import { MEMORY_RELEASES, parseMemoryRelease, type MemoryRelease } from './domain/memory-release.js';
import { MODEL_FAMILIES, parseModelFamily, type ModelFamily } from './domain/model-family.js';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** Model name from models/manifest.json; undefined = the manifest's default. */
  readonly model: string | undefined;
  /** A model file of the user's own (`--model-file`, CUTOUT_MODEL_FILE); never with `model`. */
  readonly modelFile: string | undefined;
  /** Its family (`--model-family`, CUTOUT_MODEL_FAMILY; src/model/families.ts); undefined = its descriptor's. */
  readonly modelFamily: ModelFamily | undefined;
  /** Its descriptor (`--model-descriptor`, CUTOUT_MODEL_DESCRIPTOR); undefined = `<file>.json` when there is one. */
  readonly modelDescriptor: string | undefined;
  /** Quality level of every removal (`--quality`, CUTOUT_QUALITY; docs/quality.md). */
  readonly quality: QualityLevel;
  /** Inference device asked for (`--device`, default auto). */
  readonly device: DeviceRequest;
  /** Worker threads for the removal pool; undefined = the pool's default. */
  readonly workers: number | undefined;
  /** Server processes sharing the port (SO_REUSEPORT); each has its own pool. */
  readonly processes: number;
  /** Queued removals beyond the running ones before 503; undefined = the pool's default. */
  readonly maxQueue: number | undefined;
  /** Batch models (the CUDA default): most photos per inference batch; undefined = the pool's default. */
  readonly maxBatch: number | undefined;
  /** Batch models: ms a free inference worker waits for a batch to fill; undefined = the pool's default. */
  readonly batchWaitMs: number | undefined;
  /** Batch models: inference workers sharing the model session; undefined = the pool's default. */
  readonly inferWorkers: number | undefined;
  /** When the photo workers hand their memory back (`--memory-release`; docs/memory.md); undefined = the pool's default, which a memory limit may change. */
  readonly memoryRelease: MemoryRelease | undefined;
  /** Nice value of the photo workers' threads (0..19; undefined = 0, as the process). */
  readonly photoNice: number | undefined;
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  /** Largest request body (a 22 MB image as base64 plus form overhead). */
  readonly maxBodyBytes: number;
  /**
   * Request inputs (bodies, downloaded images) held in memory at once, per process; past it 503 before a
   * body is read. Unless given (`bodyMemoryGiven`), `cutout serve` lowers it to fit a memory limit.
   */
  readonly bodyMemoryBytes: number;
  readonly bodyMemoryGiven: boolean;
  /** Bytes of /v1.0/improve uploads each account may store. */
  readonly improveQuotaBytes: number;
  /** Largest input image in bytes (domain MAX_INPUT_BYTES, 22 MB as remove.bg; tests lower it). */
  readonly maxImageBytes: number;
  /** Deadline of every request, counted from its first byte: 408 while the body arrives, 503 after. */
  readonly requestTimeoutMs: number;
  /** On shutdown, how long in-flight requests may take before their connections are closed (0 = at once). */
  readonly drainTimeoutMs: number;
  /**
   * An upload must bring 16 kB/s, counted over windows of this many ms, or it is answered 408 (docs/http.md,
   * "Connection limits"). Not a flag: uWS closes slower bodies itself unless the context keeps them; tests lower it.
   */
  readonly uploadWindowMs: number;
  readonly fetchConnectTimeoutMs: number;
  readonly fetchTimeoutMs: number;
  /** Create and print a demo key on first start. */
  readonly demoKey: boolean;
  /** How ledger commits reach the disk: `periodic` (flush every second) or `fsync` (every commit). */
  readonly durability: Durability;
  /** POST /sandbox/v1.0/removebg is served (`--sandbox on|off`). */
  readonly sandbox: boolean;
  /** Sandbox requests each client address may make per minute (IPv6: per /64). */
  readonly sandboxRatePerMinute: number;
  /** Pool places (running + waiting) sandbox removals may hold at once, per process. */
  readonly sandboxShare: number;
  /** The client address is the last X-Forwarded-For entry (a reverse proxy in front sets it). */
  readonly trustProxy: boolean;
  /** Bearer token GET /metrics asks for; without one it is served only on a loopback bind. */
  readonly metricsToken: string | undefined;
  /** PostgreSQL ledger shared by many nodes (`postgres://…`); undefined = LMDB in `dataDir`. */
  readonly ledgerUrl: string | undefined;
  /** PostgreSQL ledger: how long a node's concurrency slots and holds outlive its last renewal. */
  readonly ledgerLeaseMs: number;
}

export class ConfigError extends Error {
  /** The serve flag whose value was refused (without `--`), when one was. */
  flag?: string;
  /** Whether that value came from the command line (else from its environment variable). */
  fromFlag?: boolean;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const MB = 1024 * 1024;

/** The least `--body-memory-bytes` defaults to, however tight the memory: two bodies of the largest size. */
export function minBodyMemoryBytes(maxBodyBytes: number): number {
  return 2 * maxBodyBytes;
}

export const DEFAULTS = Object.freeze({
  host: '0.0.0.0',
  port: 8080,
  dataDir: './data',
  maxImageBytes: MAX_INPUT_BYTES,
  maxBodyBytes: Math.ceil((MAX_INPUT_BYTES * 4) / 3) + MB,
  /** Never below two bodies of the largest size (raised with --max-body-bytes). */
  bodyMemoryBytes: MAX_INPUT_BYTES_IN_MEMORY,
  improveQuotaBytes: 100 * MB,
  fetchConnectTimeoutMs: 5_000,
  fetchTimeoutMs: 20_000,
  // Two minutes: a full queue of 64 photos at ~1 s each still fits, and no client waits for ever.
  requestTimeoutMs: 120_000,
  // Thirty seconds: a removal in progress finishes (a few seconds each), a slow upload does not hold the stop.
  drainTimeoutMs: 30_000,
  // uWS's own rule for bodies (160 kB per 10 s idle period), now answered with a 408 instead of a silent close.
  uploadWindowMs: 10_000,
  // A person trying the API by hand, not a batch job.
  sandboxRatePerMinute: 10,
  // One running and one waiting on the default single worker: keyed work waits at most for one sandbox photo.
  sandboxShare: 2,
  // Thirty seconds: a dead node's slots and holds come back within it; renewed every third of it.
  ledgerLeaseMs: 30_000,
});

/** A metrics token shorter than this is refused at start-up (it would be guessable). */
export const MIN_METRICS_TOKEN_LENGTH = 16;

/** Flag name → env var. Every flag takes a value (`--port 8080` or `--port=8080`). */
const FLAGS: Readonly<Record<string, string>> = {
  host: 'CUTOUT_HOST',
  port: 'CUTOUT_PORT',
  data: 'CUTOUT_DATA_DIR',
  workers: 'CUTOUT_WORKERS',
  model: 'CUTOUT_MODEL',
  'model-file': 'CUTOUT_MODEL_FILE',
  'model-family': 'CUTOUT_MODEL_FAMILY',
  'model-descriptor': 'CUTOUT_MODEL_DESCRIPTOR',
  quality: 'CUTOUT_QUALITY',
  device: 'CUTOUT_DEVICE',
  processes: 'CUTOUT_PROCESSES',
  'max-queue': 'CUTOUT_MAX_QUEUE',
  'max-batch': 'CUTOUT_MAX_BATCH',
  'batch-wait-ms': 'CUTOUT_BATCH_WAIT_MS',
  'infer-workers': 'CUTOUT_INFER_WORKERS',
  'photo-nice': 'CUTOUT_PHOTO_NICE',
  'memory-release': 'CUTOUT_MEMORY_RELEASE',
  'tls-cert': 'CUTOUT_TLS_CERT',
  'tls-key': 'CUTOUT_TLS_KEY',
  'max-body-bytes': 'CUTOUT_MAX_BODY_BYTES',
  'body-memory-bytes': 'CUTOUT_BODY_MEMORY_BYTES',
  'improve-quota-bytes': 'CUTOUT_IMPROVE_QUOTA_BYTES',
  'fetch-timeout-ms': 'CUTOUT_FETCH_TIMEOUT_MS',
  'request-timeout': 'CUTOUT_REQUEST_TIMEOUT',
  durability: 'CUTOUT_DURABILITY',
  'drain-timeout': 'CUTOUT_DRAIN_TIMEOUT',
  sandbox: 'CUTOUT_SANDBOX',
  'sandbox-rate-per-minute': 'CUTOUT_SANDBOX_RATE_PER_MINUTE',
  'sandbox-share': 'CUTOUT_SANDBOX_SHARE',
  'metrics-token': 'CUTOUT_METRICS_TOKEN',
  ledger: 'CUTOUT_LEDGER_URL',
  'ledger-lease': 'CUTOUT_LEDGER_LEASE',
};
const BOOLEAN_FLAGS: Readonly<Record<string, string>> = { 'no-demo-key': 'CUTOUT_NO_DEMO_KEY', 'trust-proxy': 'CUTOUT_TRUST_PROXY' };

/** Every `serve` flag name (without `--`), for usage-text checks. */
export const FLAG_NAMES: readonly string[] = Object.freeze([...Object.keys(FLAGS), ...Object.keys(BOOLEAN_FLAGS)]);

function quality(value: string | undefined): QualityLevel {
  if (value === undefined || value === '') return DEFAULT_QUALITY;
  const level = parseQuality(value);
  if (!level) throw new ConfigError(`Expected one of ${QUALITY_LEVELS.join(', ')} for --quality (CUTOUT_QUALITY) but received '${value}'`);
  return level;
}

function modelFamily(value: string | undefined): ModelFamily | undefined {
  if (value === undefined || value === '') return undefined;
  const family = parseModelFamily(value);
  if (!family) throw new ConfigError(`Expected one of ${MODEL_FAMILIES.join(', ')} for --model-family (CUTOUT_MODEL_FAMILY) but received '${value}'`);
  return family;
}

/**
 * `--model NAME` or `--model-file PATH` (with `--model-family`/`--model-descriptor`), never both: the
 * file's family and descriptor are checked against the file itself when the pool starts (src/model/families.ts).
 */
export function modelChoice(
  model: string | undefined,
  file: string | undefined,
  family: ModelFamily | undefined,
  descriptor: string | undefined,
): { model: string | undefined; modelFile: string | undefined; modelFamily: ModelFamily | undefined; modelDescriptor: string | undefined } {
  const m = model || undefined;
  const f = file || undefined;
  const fam = family;
  const d = descriptor || undefined;
  if (m !== undefined && f !== undefined) {
    throw new ConfigError(`--model ${m} and --model-file ${f} name two models: give one (a bundled model by name, or a file of your own)`);
  }
  if (f === undefined && (fam !== undefined || d !== undefined)) {
    throw new ConfigError(`--model-family and --model-descriptor describe a model file: give --model-file too`);
  }
  return { model: m, modelFile: f, modelFamily: fam, modelDescriptor: d };
}

function memoryRelease(value: string | undefined): MemoryRelease | undefined {
  if (value === undefined || value === '') return undefined;
  const policy = parseMemoryRelease(value);
  if (!policy) throw new ConfigError(`Expected one of ${MEMORY_RELEASES.join(', ')} for --memory-release (CUTOUT_MEMORY_RELEASE) but received '${value}'`);
  return policy;
}

function parseArgv(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`Unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (name in BOOLEAN_FLAGS) {
      out.set(name, eq < 0 ? 'true' : arg.slice(eq + 1));
      continue;
    }
    if (!(name in FLAGS)) throw new ConfigError(`Unknown option '--${name}'`);
    const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new ConfigError(`Option '--${name}' needs a value`);
    out.set(name, value);
  }
  return out;
}

function integer(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined || text === '') return undefined;
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= min && n <= max)) throw new ConfigError(`Expected an integer from ${min} to ${max} for ${name} but received '${text}'`);
  return n;
}

/** Seconds, decimals allowed (`--request-timeout 0.5`), as milliseconds. */
function seconds(name: string, text: string | undefined, minMs: number, maxMs: number): number | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = /^\d+(\.\d+)?$/.test(text.trim()) ? Math.round(Number(text.trim()) * 1000) : NaN;
  if (!(ms >= minMs && ms <= maxMs)) {
    throw new ConfigError(`Expected a number of seconds from ${minMs / 1000} to ${maxMs / 1000} for ${name} but received '${text}'`);
  }
  return ms;
}

function device(text: string | undefined): DeviceRequest {
  try {
    return parseDevice(text);
  } catch (err) {
    if (err instanceof DeviceError) throw new ConfigError(err.message);
    throw err;
  }
}

function durability(text: string | undefined): Durability {
  try {
    return parseDurability(text) ?? DEFAULT_DURABILITY;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function ledgerUrl(text: string | undefined): string | undefined {
  try {
    return parseLedgerUrl(text);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function bool(name: string, text: string | undefined): boolean {
  if (text === undefined || text === '') return false;
  if (/^(1|true|yes)$/i.test(text)) return true;
  if (/^(0|false|no)$/i.test(text)) return false;
  throw new ConfigError(`Expected true or false for ${name} but received '${text}'`);
}

function onOff(name: string, text: string | undefined, fallback: boolean): boolean {
  if (text === undefined || text === '') return fallback;
  if (/^(on|1|true|yes)$/i.test(text.trim())) return true;
  if (/^(off|0|false|no)$/i.test(text.trim())) return false;
  throw new ConfigError(`Expected on or off for ${name} but received '${text}'`);
}

/** Visible ASCII without spaces (it travels in an Authorization header), long enough not to be guessed. */
function metricsToken(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^[\x21-\x7e]+$/.test(text) || text.length < MIN_METRICS_TOKEN_LENGTH || text.length > 256) {
    throw new ConfigError(
      `Expected ${MIN_METRICS_TOKEN_LENGTH} to 256 visible ASCII characters without spaces for metrics-token but received one of ${text.length} characters`,
    );
  }
  return text;
}

/**
 * Build the Config. `env` defaults to process.env; throws ConfigError with a one-line reason, which
 * names the environment variable when the value came from one (`for CUTOUT_PORT but received …`).
 */
export function loadConfig(argv: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return buildConfig(argv, env);
  } catch (err) {
    if (!(err instanceof ConfigError) || err.flag === undefined) throw err;
    // The checks name a value by its flag; say where this one came from: `--port` or `CUTOUT_PORT`.
    const variable = FLAGS[err.flag] ?? BOOLEAN_FLAGS[err.flag];
    const given = err.fromFlag ? `--${err.flag}` : variable;
    const named = err.message.replace(new RegExp(` for (?:--)?${err.flag}(?: \\(${variable}\\))? but received `), ` for ${given} but received `);
    const out = new ConfigError(named);
    out.flag = err.flag;
    out.fromFlag = err.fromFlag;
    throw out;
  }
}

function buildConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const flags = parseArgv(argv);
  const read = (flag: string): string | undefined => flags.get(flag) ?? env[FLAGS[flag] ?? BOOLEAN_FLAGS[flag] ?? ''];
  // A value that fails its check is traced to its flag, and whether the command line gave it.
  let current: string | undefined;
  const get = (flag: string): string | undefined => {
    current = flag;
    return read(flag);
  };

  try {
    const tlsCert = get('tls-cert') || undefined;
    const tlsKey = get('tls-key') || undefined;
    if ((tlsCert === undefined) !== (tlsKey === undefined)) {
      throw new ConfigError('--tls-cert and --tls-key must be given together');
    }
    const processes = get('processes');
    if (processes !== undefined && processes !== '1' && get('port') === '0') {
      throw new ConfigError('--processes above 1 needs a fixed --port (the processes share it)');
    }
    const host = get('host') || DEFAULTS.host;
    if (/\s/.test(host)) throw new ConfigError(`Invalid host '${host}'`);

    const family = modelFamily(get('model-family'));
    const [model, modelFile, descriptor] = [get('model'), get('model-file'), get('model-descriptor')];
    current = undefined; // a conflict between the model flags is no one flag's value
    const models = modelChoice(model, modelFile, family, descriptor);

    const maxBodyBytes = integer('max-body-bytes', get('max-body-bytes'), 1024, 1024 * MB) ?? DEFAULTS.maxBodyBytes;
    const bodyMemoryBytes =
      integer('body-memory-bytes', get('body-memory-bytes'), 1024, 1024 * 1024 * MB) ?? Math.max(DEFAULTS.bodyMemoryBytes, minBodyMemoryBytes(maxBodyBytes));
    if (bodyMemoryBytes < maxBodyBytes) {
      throw new ConfigError(`--body-memory-bytes (${bodyMemoryBytes}) must be at least --max-body-bytes (${maxBodyBytes}): no largest body would ever fit`);
    }

    const config: Config = {
      host,
      port: integer('port', get('port'), 0, 65535) ?? DEFAULTS.port,
      dataDir: get('data') || DEFAULTS.dataDir,
      ...models,
      quality: quality(get('quality')),
      device: device(get('device')),
      workers: integer('workers', get('workers'), 1, 256),
      processes: integer('processes', get('processes'), 1, 64) ?? 1,
      maxQueue: integer('max-queue', get('max-queue'), 0, 1_000_000),
      maxBatch: integer('max-batch', get('max-batch'), 1, 256),
      batchWaitMs: integer('batch-wait-ms', get('batch-wait-ms'), 0, 10_000),
      inferWorkers: integer('infer-workers', get('infer-workers'), 1, 8),
      photoNice: integer('photo-nice', get('photo-nice'), 0, 19),
      memoryRelease: memoryRelease(get('memory-release')),
      tlsCert,
      tlsKey,
      maxImageBytes: DEFAULTS.maxImageBytes,
      maxBodyBytes,
      bodyMemoryBytes,
      bodyMemoryGiven: Boolean(get('body-memory-bytes')),
      improveQuotaBytes: integer('improve-quota-bytes', get('improve-quota-bytes'), 0, 1024 * 1024 * MB) ?? DEFAULTS.improveQuotaBytes,
      requestTimeoutMs: seconds('request-timeout', get('request-timeout'), 10, 86_400_000) ?? DEFAULTS.requestTimeoutMs,
      drainTimeoutMs: seconds('drain-timeout', get('drain-timeout'), 0, 86_400_000) ?? DEFAULTS.drainTimeoutMs,
      uploadWindowMs: DEFAULTS.uploadWindowMs,
      fetchConnectTimeoutMs: DEFAULTS.fetchConnectTimeoutMs,
      fetchTimeoutMs: integer('fetch-timeout-ms', get('fetch-timeout-ms'), 100, 600_000) ?? DEFAULTS.fetchTimeoutMs,
      demoKey: !bool('no-demo-key', get('no-demo-key')),
      durability: durability(get('durability')),
      sandbox: onOff('sandbox', get('sandbox'), true),
      sandboxRatePerMinute: integer('sandbox-rate-per-minute', get('sandbox-rate-per-minute'), 1, 1_000_000) ?? DEFAULTS.sandboxRatePerMinute,
      sandboxShare: integer('sandbox-share', get('sandbox-share'), 1, 1_000_000) ?? DEFAULTS.sandboxShare,
      trustProxy: bool('trust-proxy', get('trust-proxy')),
      metricsToken: metricsToken(get('metrics-token')),
      ledgerUrl: ledgerUrl(get('ledger')),
      // At least 0.3 s: renewals every third of it must still fit a round trip.
      ledgerLeaseMs: seconds('ledger-lease', get('ledger-lease'), 300, 3_600_000) ?? DEFAULTS.ledgerLeaseMs,
    };
    return Object.freeze(config);
  } catch (err) {
    if (err instanceof ConfigError && current !== undefined) {
      err.flag = current;
      err.fromFlag = flags.has(current);
    }
    throw err;
  }
}
