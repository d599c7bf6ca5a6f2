// A metric in prom-client's JSON form: what each process of `serve --processes N` sends its
// supervisor (group-messages.ts) and what observe/metrics-merge.ts combines.

/** One series' value, as prom-client's `getMetricsAsJSON()` gives it (histograms: `le` in labels). */
export interface MetricSample {
  value: number;
  labels: Record<string, string | number>;
  /** `<name>_bucket`, `_sum`, `_count` for a histogram's series. */
  metricName?: string;
}

export type MetricAggregator = 'sum' | 'first' | 'min' | 'max' | 'average' | 'omit';

export interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator: MetricAggregator;
  values: MetricSample[];
}
