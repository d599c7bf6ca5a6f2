// The new inputs of the sandbox, metrics and request log, hostile ones first: X-Forwarded-For,
// X-Request-Id, the per-client window, the loopback test for /metrics, the flags, the stage table.
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ClientWindow } from '../../src/api/client-window.js';
import { isLoopbackHost } from '../../src/api/metrics-endpoint.js';
import { addressGroup, clientAddress, normalizeAddress } from '../../src/http/client-address.js';
import { requestIdFor } from '../../src/http/request-id.js';
import { prettyLine } from '../../src/observe/pretty-line.js';
import { stageMs } from '../../src/observe/stages.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('X-Forwarded-For: read only with trustProxy, only its last entry, only when it is an IP', async (t) => {
  t.equal(clientAddress('10.0.0.1', '203.0.113.9', false), '10.0.0.1', 'ignored without --trust-proxy');
  t.equal(clientAddress('10.0.0.1', '203.0.113.9', true), '203.0.113.9');
  t.equal(clientAddress('10.0.0.1', '1.1.1.1, 8.8.8.8,203.0.113.9 ', true), '203.0.113.9', 'the entry the proxy appended');
  for (const bad of [
    '',
    ' ',
    ',',
    'not-an-ip',
    '203.0.113.9, evil',
    '999.1.1.1',
    '203.0.113.9:443',
    '[::1]',
    'x'.repeat(100_000),
    '1.2.3.4\u0000',
    'unknown',
  ]) {
    t.equal(clientAddress('10.0.0.1', bad, true), '10.0.0.1', `garbage falls back to the socket: ${JSON.stringify(bad.slice(0, 20))}`);
  }
  t.equal(clientAddress('::ffff:127.0.0.1', undefined, true), '127.0.0.1', 'a dual-stack socket address is IPv4');
  t.equal(clientAddress('10.0.0.1', '::FFFF:203.0.113.9', true), '203.0.113.9');
  t.equal(normalizeAddress('2001:0db8:0000:0000:0000:0000:0000:0001'), '2001:db8::1');
  t.equal(normalizeAddress('not an address'), 'not an address', 'left as is (uWS gave it)');
});

t.test('address groups: IPv4 as is, IPv6 per /64', async (t) => {
  t.equal(addressGroup('203.0.113.9'), '203.0.113.9');
  t.equal(addressGroup('2001:db8:1:2::7'), '2001:db8:1:2::/64');
  t.equal(addressGroup('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64', 'one /64, whatever the host part');
  t.equal(addressGroup('2001:db8::1'), '2001:db8:0:0::/64');
  t.equal(addressGroup('::1'), '0:0:0:0::/64');
  t.equal(addressGroup('fe80::1:2:3:4'), 'fe80:0:0:0::/64');
});

t.test('X-Request-Id: a sane one is kept, anything else replaced by a UUID', async (t) => {
  for (const good of ['abc-123', 'a', '01HZX3J4K5M6N7P8Q9R0S1T2V3', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8', 'x'.repeat(128)]) {
    t.equal(requestIdFor(good), good);
  }
  for (const bad of [
    undefined,
    '',
    ' ',
    '-leading-dash',
    'has space',
    'quote"',
    'comma,list',
    'tab\t',
    'nl\nx',
    'ümlaut',
    '<script>',
    'x'.repeat(129),
    'y'.repeat(100_000),
  ]) {
    t.match(requestIdFor(bad), UUID, `replaced: ${JSON.stringify(bad?.slice(0, 20))}`);
  }
  t.not(requestIdFor(undefined), requestIdFor(undefined), 'fresh each time');
});

t.test('per-client window: a fixed wall-clock minute, counted per client, a table that cannot grow for ever', async (t) => {
  let now = Date.UTC(2026, 0, 1, 12, 0, 45, 500);
  const w = new ClientWindow(2, 3, () => now);
  t.match(w.take('a'), { ok: true, limit: 2, remaining: 1, reset: Date.UTC(2026, 0, 1, 12, 1, 0) / 1000 });
  t.match(w.take('a'), { ok: true, remaining: 0 });
  t.match(w.take('a'), { ok: false, remaining: 0, retryAfter: 15 }, 'retry when the minute turns');
  t.match(w.take('b'), { ok: true, remaining: 1 }, 'other clients have their own count');
  w.take('c');
  t.match(w.take('d'), { ok: false }, 'a fourth client in a table of three is refused');
  t.match(w.take('b'), { ok: true, remaining: 0 }, 'clients already counted go on');
  now += 15_000; // the next minute
  t.match(w.take('a'), { ok: true, remaining: 1 });
  t.match(w.take('d'), { ok: true }, 'the table starts empty each minute');
});

t.test('loopback binds (where /metrics needs no token)', async (t) => {
  for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) t.ok(isLoopbackHost(h), h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', 'example.com', 'localhost.example.com', '127.0.0.1.nip.io', ''])
    t.notOk(isLoopbackHost(h), h);
});

t.test('flags: limits, the proxy switch, the metrics token', async (t) => {
  const c = loadConfig([], {});
  t.match(c, { sandbox: true, sandboxRatePerMinute: 10, sandboxShare: 2, trustProxy: false, metricsToken: undefined });
  t.match(loadConfig(['--sandbox-rate-per-minute', '3', '--sandbox-share=1', '--trust-proxy'], {}), {
    sandboxRatePerMinute: 3,
    sandboxShare: 1,
    trustProxy: true,
  });
  t.match(loadConfig([], { CUTOUT_SANDBOX_RATE_PER_MINUTE: '7', CUTOUT_SANDBOX_SHARE: '4', CUTOUT_TRUST_PROXY: 'true' }), {
    sandboxRatePerMinute: 7,
    sandboxShare: 4,
    trustProxy: true,
  });
  const token = 's3cret-token-0123456789';
  t.equal(loadConfig(['--metrics-token', token], {}).metricsToken, token);
  t.equal(loadConfig([], { CUTOUT_METRICS_TOKEN: token }).metricsToken, token);
  for (const [argv, message] of [
    [['--sandbox-share', '0'], /integer from 1 to 1000000 for --sandbox-share but received '0'/],
    [['--sandbox-rate-per-minute', '-1'], /for --sandbox-rate-per-minute but received '-1'/],
    [['--sandbox-rate-per-minute', 'lots'], /for --sandbox-rate-per-minute/],
    [['--metrics-token', 'short'], /16 to 256 visible ASCII characters .* one of 5 characters/],
    [['--metrics-token', 'has a space in it, long enough'], /visible ASCII/],
    [['--metrics-token', 'x'.repeat(257)], /one of 257 characters/],
    [['--trust-proxy=maybe'], /Expected true or false for --trust-proxy/],
  ] as const) {
    t.throws(() => loadConfig(argv, {}), ConfigError);
    t.throws(() => loadConfig(argv, {}), message);
  }
  t.notMatch(
    String(
      (() => {
        try {
          loadConfig(['--metrics-token', 'short-secret'], {});
        } catch (e) {
          return (e as Error).message;
        }
      })(),
    ),
    /short-secret/,
    'the refusal does not echo the token',
  );
});

t.test('worker timings → the stages operators watch', async (t) => {
  t.same(
    stageMs({
      queue: 1.25,
      probe: 2,
      decode: 10,
      decodeOutput: 3.04,
      infer: 400,
      composite: 20,
      layout: 1,
      background: 0.5,
      encode: 30,
      total: 470,
      decodeWait: 9,
      batch: 4,
    }),
    {
      queue: 1.3,
      decode: 15,
      inference: 400,
      composite: 21.5,
      encode: 30,
    },
  );
  t.same(stageMs(undefined), {});
  t.same(stageMs({ infer: Number.NaN, constructor: 5, __proto__: 3 } as Record<string, number>), {}, 'odd names and non-numbers are left out');
});

t.test('the terminal form of a log line', async (t) => {
  const line = JSON.stringify({
    level: 'info',
    time: '2026-11-25T23:46:34.667Z',
    pid: 1,
    req_id: 'abc',
    method: 'POST',
    route: '/v1.0/removebg',
    status: 200,
    account: 'acct_1',
    client: '127.0.0.1',
    output: '640x427',
    ms: { decode: 31, inference: 690 },
    bytes_in: 1_234_567,
    bytes_out: 310_000,
    total_ms: 812.3,
    msg: 'request',
  });
  t.equal(prettyLine(line), '23:46:34.667 POST /v1.0/removebg 200 640x427 812.3 ms (decode 31, inference 690) in 1.2 MB out 310 kB acct_1 abc\n');
  const notFound = JSON.stringify({
    time: '2026-11-25T23:46:34.667Z',
    req_id: 'x',
    method: 'GET',
    route: null,
    status: 404,
    code: 'not_found',
    account: null,
    client: '::1',
    bytes_in: 0,
    bytes_out: 83,
    total_ms: 1,
    msg: 'request',
  });
  t.equal(prettyLine(notFound), '23:46:34.667 GET unmatched 404 not_found 1 ms in 0 B out 83 B ::1 x\n');
  t.equal(prettyLine('not json\n'), 'not json\n', 'anything else passes through');
});
