// GET /metrics: the Prometheus text exposition. With `--metrics-token` it asks for
// `Authorization: Bearer <token>` (401 otherwise); without one it is served only when the server
// binds to loopback, where nobody else can reach it, and refused (403) on any other bind.

import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { RequestContext } from '../http/context.js';
import { ApiError } from './errors.js';

/** What the endpoint serves (observe/metrics.ts). */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

export interface MetricsAccess {
  token: string | undefined;
  host: string;
}

/** The server binds to loopback only: `localhost`, 127.0.0.0/8, `::1` (or `::ffff:127.x.y.z`). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** How /metrics is reached, for the start-up line. */
export function describeMetricsAccess(access: MetricsAccess): string {
  if (access.token) return 'metrics: GET /metrics with Authorization: Bearer <--metrics-token>';
  if (isLoopbackHost(access.host)) return 'metrics: GET /metrics, no token (loopback bind)';
  return `metrics: GET /metrics is refused on ${access.host} without a token; set --metrics-token (or CUTOUT_METRICS_TOKEN) to serve it`;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export function metricsHandler(source: MetricsSource, access: MetricsAccess): (ctx: RequestContext) => Promise<void> {
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first wrong byte.
  const expected = access.token === undefined ? undefined : digest(access.token);
  const open = expected === undefined && isLoopbackHost(access.host);
  return async (ctx) => {
    if (expected === undefined && !open) {
      throw new ApiError(
        403,
        'metrics_disabled',
        'Metrics disabled',
        'GET /metrics needs --metrics-token (CUTOUT_METRICS_TOKEN) when the server binds to a non-loopback address.',
      );
    }
    if (expected !== undefined) {
      const m = /^bearer +(\S+) *$/i.exec(ctx.header('authorization') ?? '');
      if (!m || !timingSafeEqual(digest(m[1]!), expected)) {
        throw new ApiError(401, 'auth_failed', 'Metrics token invalid', 'Send the metrics token as Authorization: Bearer <token>.', {
          'WWW-Authenticate': 'Bearer realm="cutout metrics"',
        });
      }
    }
    const text = await source.render();
    ctx.send(200, { 'Content-Type': source.contentType, 'Cache-Control': 'no-store' }, text);
  };
}
