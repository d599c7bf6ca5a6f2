// The four prom-client classes the metrics use, loaded from their own files. prom-client's index
// loads 88 modules (cluster aggregation, the push gateway with http/https, default process metrics,
// summaries with t-digest); these four need 8, which keeps an idle `cutout serve` within its RSS
// budget (figures in docs/http.md, "Metrics"). prom-client is pinned: its lib/ layout is
// part of the version we depend on.

import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry = require('prom-client/lib/registry') as typeof Prom.Registry;
export const Counter = require('prom-client/lib/counter') as typeof Prom.Counter;
export const Gauge = require('prom-client/lib/gauge') as typeof Prom.Gauge;
export const Histogram = require('prom-client/lib/histogram') as typeof Prom.Histogram;
