// The metrics of `serve --processes N` merged: counters and histograms summed per series whatever
// the label order, gauges by their aggregator (build info stays 1), a process's gauges dropped when
// it ends, malformed parts refused, and one registry rendered through the merge reads exactly as
// prom-client renders it itself.
import t from 'tap';
import { countsOf, isMetricParts, mergeMetrics, type MetricJson } from '../../src/observe/metrics-merge.js';
import { renderMetrics } from '../../src/observe/group-metrics.js';
import { createMetrics } from '../../src/observe/metrics.js';
import type { RequestInfo } from '../../src/http/server.js';
import type { RemovalPool } from '../../src/pool/pool-api.js';

const counter = (values: MetricJson['values']): MetricJson => ({ name: 'c_total', help: 'c', type: 'counter', aggregator: 'sum', values });
const gauge = (name: string, aggregator: MetricJson['aggregator'], values: MetricJson['values']): MetricJson => ({
  name,
  help: name,
  type: 'gauge',
  aggregator,
  values,
});

t.test('counters sum per series; label order does not split a series; new series are appended', async (t) => {
  const a = [
    counter([
      { value: 3, labels: { route: '/a', status: '200' } },
      { value: 1, labels: { route: '/a', status: '403' } },
    ]),
  ];
  const b = [
    counter([
      { value: 4, labels: { status: '200', route: '/a' } },
      { value: 2, labels: { route: '/b', status: '200' } },
    ]),
  ];
  const [m] = mergeMetrics([a, b]);
  t.same(
    m!.values.map((v) => [v.labels.route, v.labels.status, v.value]),
    [
      ['/a', '200', 7],
      ['/a', '403', 1],
      ['/b', '200', 2],
    ],
  );
  t.same(mergeMetrics([a, b, []]), mergeMetrics([a, b]), 'an empty part adds nothing');
  t.equal(a[0]!.values[0]!.value, 3, 'the parts are not changed');
});

t.test('gauges by their aggregator; omit leaves the metric out', async (t) => {
  const part = (depth: number, info: number) => [
    gauge('queue', 'sum', [{ value: depth, labels: {} }]),
    gauge('info', 'max', [{ value: info, labels: { version: '1' } }]),
    gauge('gone', 'omit', [{ value: 5, labels: {} }]),
    gauge('low', 'min', [{ value: depth, labels: {} }]),
    gauge('mean', 'average', [{ value: depth, labels: {} }]),
    gauge('one', 'first', [{ value: depth, labels: {} }]),
  ];
  const merged = Object.fromEntries(mergeMetrics([part(2, 1), part(6, 1), part(1, 1)]).map((m) => [m.name, m.values[0]!.value]));
  t.same(merged, { queue: 9, info: 1, low: 1, mean: 3, one: 2 });
});

t.test('a histogram keeps each series` buckets together and in order', async (t) => {
  const h = (route: string, counts: number[]): MetricJson => ({
    name: 'h',
    help: 'h',
    type: 'histogram',
    aggregator: 'sum',
    values: [
      ...['0.1', '1', '+Inf'].map((le, i) => ({ value: counts[i]!, labels: { le, route }, metricName: 'h_bucket' })),
      { value: counts[2]! * 0.5, labels: { route }, metricName: 'h_sum' },
      { value: counts[2]!, labels: { route }, metricName: 'h_count' },
    ],
  });
  const [m] = mergeMetrics([[h('/a', [1, 2, 3])], [h('/b', [0, 1, 1])], [h('/a', [1, 1, 1])]]);
  t.same(
    m!.values.map((v) => `${v.metricName}{${v.labels.route},${v.labels.le ?? ''}}=${v.value}`),
    [
      'h_bucket{/a,0.1}=2',
      'h_bucket{/a,1}=3',
      'h_bucket{/a,+Inf}=4',
      'h_sum{/a,}=2',
      'h_count{/a,}=4',
      'h_bucket{/b,0.1}=0',
      'h_bucket{/b,1}=1',
      'h_bucket{/b,+Inf}=1',
      'h_sum{/b,}=0.5',
      'h_count{/b,}=1',
    ],
  );
});

t.test('countsOf keeps what outlives a process: counters and histograms, not gauges', async (t) => {
  const part = [counter([{ value: 1, labels: {} }]), gauge('queue', 'sum', [{ value: 3, labels: {} }]), { ...counter([]), name: 'h', type: 'histogram' }];
  t.same(
    countsOf(part).map((m) => m.name),
    ['c_total', 'h'],
  );
});

t.test('isMetricParts refuses anything but well-formed registries', async (t) => {
  t.ok(isMetricParts([counter([{ value: 1, labels: {} }])]));
  t.ok(isMetricParts([]));
  for (const bad of [
    null,
    {},
    'x',
    [null],
    [{ name: 'x' }],
    [{ ...counter([]), values: [{ value: '1', labels: {} }] }],
    [{ ...counter([]), values: [{ value: 1, labels: null }] }],
    [{ ...counter([]), help: 3 }],
  ]) {
    t.notOk(isMetricParts(bad), JSON.stringify(bad));
  }
});

t.test("one process's registry through merge and render reads as prom-client renders it", async (t) => {
  // Fixed page-fault counts: the process's own would move between the two renders.
  const metrics = createMetrics('9.9.9', () => ({ minorPageFault: 1234, majorPageFault: 5 }));
  const info = (route: string, status: number, durationMs: number): RequestInfo =>
    ({
      method: 'GET',
      path: route,
      route,
      status,
      aborted: false,
      timedOut: false,
      requestId: 'r',
      clientAddress: '127.0.0.1',
      durationMs,
      bytesIn: 0,
      bytesOut: 0,
      errorCode: status === 429 ? 'rate_limit_exceeded' : undefined,
      notes: { creditsCharged: status === 200 && route === '/v1.0/removebg' ? 2 : 0 },
    }) as unknown as RequestInfo;
  metrics.attachPool({ info: { model: 'isnet-int8', device: { label: 'cpu' } }, stats: () => ({ queued: 1, running: 2 }) } as unknown as RemovalPool);
  metrics.onRequestEnd(info('/v1.0/removebg', 200, 120));
  metrics.onRequestEnd(info('/v1.0/removebg', 429, 3));
  metrics.onRequestEnd(info('/v1.0/account', 200, 1));
  const own = await metrics.render();
  const snapshot = await metrics.snapshot();
  t.equal(await renderMetrics(mergeMetrics([snapshot])), own, 'identical text');
  t.match(own, /^process_minor_page_faults_total 1234$/m, 'the page faults as read');
  t.match(own, /^process_major_page_faults_total 5$/m);
  const twice = await renderMetrics(mergeMetrics([snapshot, await metrics.snapshot()]));
  t.match(twice, /^cutout_http_requests_total\{route="\/v1.0\/removebg",status="200"\} 2$/m, 'two processes: counts doubled');
  t.match(twice, /^cutout_credits_charged_total 4$/m);
  t.match(twice, /^cutout_build_info\{version="9.9.9",model="isnet-int8",device="cpu",model_family="[^"]+",model_sha256="[^"]+"\} 1$/m, 'build info stays 1');
  t.match(twice, /^cutout_queue_depth 2$/m, 'gauges summed');
  t.match(twice, /^cutout_in_flight 4$/m);
  t.match(twice, /^process_minor_page_faults_total 2468$/m, 'page faults summed over the processes');
  t.match(twice, /^cutout_rejections_total\{reason="rate_limit_exceeded"\} 2$/m);
});
