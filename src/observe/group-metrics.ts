// GET /metrics in a process of `serve --processes N`: the whole group's registries, collected by the
// supervisor (cli/group-hub.ts) and merged here (metrics-merge.ts), so whichever process a scrape
// reaches, it reports the group. Without an answer from the supervisor the scrape fails with 503:
// one process's figures alone would read to Prometheus as every counter resetting.

import { ApiError } from '../api/errors.js';
import type { MetricsSource } from '../api/metrics-endpoint.js';
import { GroupUnavailableError, type GroupClient } from '../process/group-client.js';
import type { Metrics } from './metrics.js';
import { mergeMetrics, type MetricJson } from './metrics-merge.js';
import { Registry } from './prom.js';

export function groupMetrics(local: Metrics, group: GroupClient): MetricsSource {
  group.answerMetrics(() => local.snapshot());
  return {
    contentType: local.contentType,
    async render() {
      let parts: MetricJson[][];
      try {
        parts = await group.ask({ what: 'metrics' });
      } catch (err) {
        if (!(err instanceof GroupUnavailableError)) throw err;
        throw new ApiError(503, 'metrics_unavailable', 'Metrics unavailable', `The other processes' metrics could not be collected: ${err.message}.`);
      }
      return renderMetrics(mergeMetrics(parts)); // each part checked by the hub as it came in
    },
  };
}

/** The Prometheus text of merged metrics, written by prom-client's own formatter. */
export function renderMetrics(metrics: readonly MetricJson[]): Promise<string> {
  const registry = new Registry();
  for (const metric of metrics) {
    // The registry renders anything with a name and get(): the merged values as they are.
    registry.registerMetric({ name: metric.name, type: metric.type, get: async () => metric } as unknown as Parameters<typeof registry.registerMetric>[0]);
  }
  return registry.metrics();
}
