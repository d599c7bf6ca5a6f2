// config.ts: flags over env over defaults, validation, frozen result.
import t from 'tap';
import { ConfigError, DEFAULTS, loadConfig } from '../../src/config.js';

t.test('defaults', async (t) => {
  const c = loadConfig([], {});
  t.equal(c.port, 8080);
  t.equal(c.dataDir, './data');
  t.equal(c.host, DEFAULTS.host);
  t.equal(c.workers, undefined);
  t.equal(c.model, undefined, 'the manifest default');
  t.equal(c.processes, 1);
  t.ok(Object.isFrozen(c));
});

t.test('env and flags (flags win)', async (t) => {
  const env = { CUTOUT_HOST: '127.0.0.1', CUTOUT_PORT: '9000', CUTOUT_DATA_DIR: '/tmp/x', CUTOUT_WORKERS: '2' };
  const c = loadConfig(['--port', '0', '--workers=3'], env);
  t.equal(c.host, '127.0.0.1');
  t.equal(c.port, 0);
  t.equal(c.dataDir, '/tmp/x');
  t.equal(c.workers, 3);
  t.equal(loadConfig([], { CUTOUT_MODEL: 'isnet-fp32' }).model, 'isnet-fp32');
  t.equal(loadConfig(['--model', 'isnet-int8'], { CUTOUT_MODEL: 'isnet-fp32' }).model, 'isnet-int8');
});

t.test('quality: flag over env over balanced; nothing else accepted', async (t) => {
  t.equal(loadConfig([], {}).quality, 'balanced');
  t.equal(loadConfig([], { CUTOUT_QUALITY: 'best' }).quality, 'best');
  t.equal(loadConfig(['--quality', 'fast'], { CUTOUT_QUALITY: 'best' }).quality, 'fast');
  t.throws(() => loadConfig(['--quality', 'high'], {}), {
    name: 'ConfigError',
    message: /Expected one of fast, balanced, best for --quality but received 'high'/,
  });
  t.throws(() => loadConfig([], { CUTOUT_QUALITY: 'Best' }), ConfigError);
});

t.test('TLS needs both files', async (t) => {
  t.throws(() => loadConfig(['--tls-cert', 'a.pem'], {}), ConfigError);
  const c = loadConfig(['--tls-cert', 'a.pem', '--tls-key', 'b.pem'], {});
  t.equal(c.tlsCert, 'a.pem');
});

t.test('bad values', async (t) => {
  t.throws(() => loadConfig(['--port', '70000'], {}), /port/);
  t.throws(() => loadConfig(['--workers', '0'], {}), /workers/);
  t.throws(() => loadConfig(['--port'], {}), /needs a value/);
  t.throws(() => loadConfig(['--frobnicate', '1'], {}), /Unknown option/);
  t.throws(() => loadConfig(['serve'], {}), /Unexpected argument/);
  t.throws(() => loadConfig([], { CUTOUT_PORT: 'eighty' }), /for CUTOUT_PORT but received 'eighty'/);
  t.throws(() => loadConfig(['--processes', '2', '--port', '0'], {}), /fixed --port/);
});

t.test('no flag or variable lets image_url reach loopback (only a program can: ServiceOptions.fetchOptions)', async (t) => {
  t.throws(() => loadConfig(['--allow-loopback'], {}), /Unknown option/);
  t.same(
    Object.keys(loadConfig([], {})).filter((k) => /loopback/i.test(k)),
    [],
    'no config field of the kind',
  );
});

t.test('--request-timeout: seconds (decimals allowed), default 120 s, bounded', async (t) => {
  t.equal(loadConfig([], {}).requestTimeoutMs, 120_000);
  t.equal(loadConfig(['--request-timeout', '30'], {}).requestTimeoutMs, 30_000);
  t.equal(loadConfig(['--request-timeout=0.25'], {}).requestTimeoutMs, 250);
  t.equal(loadConfig([], { CUTOUT_REQUEST_TIMEOUT: '2.5' }).requestTimeoutMs, 2_500);
  t.equal(loadConfig(['--request-timeout', '5'], { CUTOUT_REQUEST_TIMEOUT: '9' }).requestTimeoutMs, 5_000, 'flag wins');
  for (const bad of ['0', '-1', 'ten', '1e3', '86401', '0.001']) {
    t.throws(() => loadConfig(['--request-timeout', bad], {}), { name: 'ConfigError', message: /request-timeout/ }, bad);
  }
});

t.test('body memory cap and improve quota', async (t) => {
  const c = loadConfig([], {});
  t.equal(c.bodyMemoryBytes, 256 * 1024 * 1024);
  t.equal(c.bodyMemoryGiven, false, 'the default: serve may lower it to fit a memory limit');
  t.equal(c.improveQuotaBytes, 100 * 1024 * 1024);
  t.equal(loadConfig(['--body-memory-bytes', '5000000', '--max-body-bytes', '4000000'], {}).bodyMemoryBytes, 5_000_000);
  t.equal(loadConfig(['--body-memory-bytes', '5000000', '--max-body-bytes', '4000000'], {}).bodyMemoryGiven, true);
  t.equal(loadConfig([], { CUTOUT_BODY_MEMORY_BYTES: '300000000' }).bodyMemoryGiven, true, 'given by the environment too');
  t.equal(loadConfig(['--max-body-bytes', String(200 * 1024 * 1024)], {}).bodyMemoryBytes, 400 * 1024 * 1024, 'never below two largest bodies');
  t.equal(loadConfig([], { CUTOUT_IMPROVE_QUOTA_BYTES: '0' }).improveQuotaBytes, 0);
  t.throws(() => loadConfig(['--body-memory-bytes', '2048', '--max-body-bytes', '4096'], {}), /must be at least --max-body-bytes/);
});

t.test('--max-batch and --batch-wait-ms (batch models): pool defaults unless given, bounded', async (t) => {
  const c = loadConfig([], {});
  t.equal(c.maxBatch, undefined);
  t.equal(c.batchWaitMs, undefined);
  t.equal(loadConfig(['--max-batch', '16', '--batch-wait-ms', '0'], {}).maxBatch, 16);
  t.equal(loadConfig(['--batch-wait-ms=5'], {}).batchWaitMs, 5);
  t.equal(loadConfig([], { CUTOUT_MAX_BATCH: '4', CUTOUT_BATCH_WAIT_MS: '3' }).batchWaitMs, 3);
  t.equal(loadConfig(['--max-batch', '2'], { CUTOUT_MAX_BATCH: '4' }).maxBatch, 2, 'flag wins');
  for (const bad of ['0', '257', 'x', '-1']) t.throws(() => loadConfig(['--max-batch', bad], {}), /max-batch/, bad);
  for (const bad of ['-1', '10001', '1.5']) t.throws(() => loadConfig(['--batch-wait-ms', bad], {}), /batch-wait-ms/, bad);
});

t.test('--infer-workers (batch models): the pool default unless given, 1..8', async (t) => {
  t.equal(loadConfig([], {}).inferWorkers, undefined);
  t.equal(loadConfig(['--infer-workers', '1'], {}).inferWorkers, 1);
  t.equal(loadConfig([], { CUTOUT_INFER_WORKERS: '3' }).inferWorkers, 3);
  t.equal(loadConfig(['--infer-workers=4'], { CUTOUT_INFER_WORKERS: '3' }).inferWorkers, 4, 'flag wins');
  for (const bad of ['0', '9', 'x', '1.5']) t.throws(() => loadConfig(['--infer-workers', bad], {}), /infer-workers/, bad);
});

t.test('--photo-nice: none unless given, 0..19', async (t) => {
  t.equal(loadConfig([], {}).photoNice, undefined);
  t.equal(loadConfig(['--photo-nice', '0'], {}).photoNice, 0);
  t.equal(loadConfig([], { CUTOUT_PHOTO_NICE: '10' }).photoNice, 10);
  t.equal(loadConfig(['--photo-nice=19'], { CUTOUT_PHOTO_NICE: '10' }).photoNice, 19, 'flag wins');
  for (const bad of ['-1', '20', 'x', '2.5']) t.throws(() => loadConfig(['--photo-nice', bad], {}), /photo-nice/, bad);
});

t.test('--memory-release: the pool decides unless given, idle | every-task', async (t) => {
  t.equal(loadConfig([], {}).memoryRelease, undefined);
  t.equal(loadConfig(['--memory-release', 'every-task'], {}).memoryRelease, 'every-task');
  t.equal(loadConfig([], { CUTOUT_MEMORY_RELEASE: 'Every-Task' }).memoryRelease, 'every-task');
  t.equal(loadConfig(['--memory-release=idle'], { CUTOUT_MEMORY_RELEASE: 'every-task' }).memoryRelease, 'idle', 'flag wins');
  t.throws(() => loadConfig(['--memory-release', 'never'], {}), { message: "Expected one of idle, every-task for --memory-release but received 'never'" });
  t.throws(() => loadConfig([], { CUTOUT_MEMORY_RELEASE: 'often' }), /CUTOUT_MEMORY_RELEASE/);
});

t.test('a refused value is named as it was given: the flag, or its environment variable', async (t) => {
  const cases: Array<[Record<string, string>, string[], string]> = [
    [
      { CUTOUT_METRICS_TOKEN: 'short' },
      [],
      'Expected 16 to 256 visible ASCII characters without spaces for CUTOUT_METRICS_TOKEN but received one of 5 characters',
    ],
    [{}, ['--metrics-token', 'short'], 'Expected 16 to 256 visible ASCII characters without spaces for --metrics-token but received one of 5 characters'],
    [{ CUTOUT_PORT: 'banana' }, [], "Expected an integer from 0 to 65535 for CUTOUT_PORT but received 'banana'"],
    [{ CUTOUT_REQUEST_TIMEOUT: 'soon' }, [], "Expected a number of seconds from 0.01 to 86400 for CUTOUT_REQUEST_TIMEOUT but received 'soon'"],
    [{ CUTOUT_DEVICE: 'gpu' }, [], "Expected auto, cpu, cuda or cuda:N for CUTOUT_DEVICE but received 'gpu'"],
    [{ CUTOUT_QUALITY: 'high' }, [], "Expected one of fast, balanced, best for CUTOUT_QUALITY but received 'high'"],
    [{ CUTOUT_DURABILITY: 'always' }, [], "Expected periodic or fsync for CUTOUT_DURABILITY but received 'always'"],
    [{ CUTOUT_TRUST_PROXY: 'maybe' }, [], "Expected true or false for CUTOUT_TRUST_PROXY but received 'maybe'"],
    // The flag wins over the variable, and is the one named.
    [{ CUTOUT_WORKERS: '2' }, ['--workers', '0'], "Expected an integer from 1 to 256 for --workers but received '0'"],
  ];
  for (const [env, argv, message] of cases) {
    t.throws(() => loadConfig(argv, env), { name: 'ConfigError', message }, JSON.stringify([env, argv]));
  }
});
