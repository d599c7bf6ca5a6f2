// The metrics of `serve --processes N` as one: each process's registry, in prom-client's JSON form,
// combined series by series (counters and histograms summed, each gauge by its own aggregator), so
// a scrape that reaches any process reports the whole group, and a counter does not go back when
// the next scrape lands on another process. Plain data in, plain data out: the supervisor folds the
// counts of processes that ended with it, without loading prom-client.

import type { MetricAggregator, MetricJson, MetricSample } from '../process/metric-json.js';

// The wire form lives with the messages that carry it (process/), which sit below observe/.
export type { MetricJson };

/** A series' identity: its name and its labels in a fixed order. */
function seriesKey(sample: MetricSample): string {
  const labels = Object.keys(sample.labels)
    .sort()
    .map((k) => [k, String(sample.labels[k])]);
  return JSON.stringify([sample.metricName ?? '', labels]);
}

function combine(aggregator: MetricAggregator, values: number[]): number {
  switch (aggregator) {
    case 'first':
      return values[0]!;
    case 'min':
      return Math.min(...values);
    case 'max':
      return Math.max(...values);
    case 'average':
      return values.reduce((a, b) => a + b, 0) / values.length;
    default:
      return values.reduce((a, b) => a + b, 0);
  }
}

/**
 * The parts as one registry: metrics in the order they first appear, series within each in the
 * order they first appear (a histogram's buckets stay together and in order), values combined
 * per series by the metric's aggregator (`omit`: left out).
 */
export function mergeMetrics(parts: readonly (readonly MetricJson[])[]): MetricJson[] {
  const merged = new Map<string, { head: MetricJson; series: Map<string, { sample: MetricSample; values: number[] }> }>();
  for (const part of parts) {
    for (const metric of part) {
      let entry = merged.get(metric.name);
      if (!entry) {
        entry = { head: metric, series: new Map() };
        merged.set(metric.name, entry);
      }
      for (const sample of metric.values) {
        const key = seriesKey(sample);
        const seen = entry.series.get(key);
        if (seen) seen.values.push(sample.value);
        else entry.series.set(key, { sample, values: [sample.value] });
      }
    }
  }
  const out: MetricJson[] = [];
  for (const { head, series } of merged.values()) {
    if (head.aggregator === 'omit') continue;
    const values = [...series.values()].map(({ sample, values: v }) => ({ ...sample, value: combine(head.aggregator, v) }));
    out.push({ name: head.name, help: head.help, type: head.type, aggregator: head.aggregator, values });
  }
  return out;
}

/**
 * What outlives a process that ended: its counters and histograms (totals the group has served).
 * Its gauges (queue depth, build info) described that process only and go with it.
 */
export function countsOf(part: readonly MetricJson[]): MetricJson[] {
  return part.filter((m) => m.type === 'counter' || m.type === 'histogram');
}

/** A well-formed part from another process (the IPC channel carries JSON): anything else is dropped. */
export function isMetricParts(value: unknown): value is MetricJson[] {
  return (
    Array.isArray(value) &&
    value.every(
      (m) =>
        typeof m?.name === 'string' &&
        typeof m.help === 'string' &&
        typeof m.type === 'string' &&
        typeof m.aggregator === 'string' &&
        Array.isArray(m.values) &&
        m.values.every((s: MetricSample) => typeof s?.value === 'number' && typeof s.labels === 'object' && s.labels !== null),
    )
  );
}
