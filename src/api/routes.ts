// The service's endpoints: path → method → handler, with what the handlers need (config, ledger, pool,
// fetch options, a logger). http/server.ts routes requests to this table; it is http's one import
// from api/, and api/ never imports the server.

import { isLedgerUnavailable } from '../ledger/ledger.js';
import { ledgerUnavailable } from './errors.js';
import type { HttpError } from '../http/http-error.js';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { FetchImageOptions } from '../fetch/image-url.js';
import type { Routes } from '../http/context.js';
import type { Ledger } from '../ledger/ledger.js';
import { backlogSeconds, type RemovalPool } from '../pool/pool-api.js';
import { handleAccount } from './account.js';
import { handleHealth, handleReady } from './health.js';
import { handleImprove } from './improve.js';
import { metricsHandler, type MetricsSource } from './metrics-endpoint.js';
import { handleRemoveBg } from './removebg.js';
import { ClientWindow, MAX_CLIENTS_PER_WINDOW } from './client-window.js';
import { SANDBOX_PATH, sandboxHandler, type RateWindow } from './sandbox.js';
import { webRoutes } from '../web/routes.js';

export interface ApiLogger {
  info(msg: string): void;
  error(msg: string, err?: unknown): void;
}

export interface ApiDeps {
  config: Config;
  pool: RemovalPool;
  ledger: Ledger;
  log: ApiLogger;
  /** Overrides for image_url fetching (tests: `allowLoopback`, `ca`). */
  fetchOptions?: Partial<FetchImageOptions>;
  /** What GET /metrics serves; no such route without it. */
  metrics?: MetricsSource;
  /** Wall clock of the sandbox's per-client window (tests: a fixed minute). */
  clock?: () => number;
  /** The sandbox's per-client window; default one of this server's own (the processes of --processes N share their supervisor's). */
  sandboxWindow?: RateWindow;
}

export interface Api {
  routes: Routes;
  /** Retry-After, in seconds, for a request whose deadline passed once its body was in: the pool's backlog. */
  retryAfterSeconds(): number;
  /** The answer for a failure that is not an HttpError but has one (the ledger unavailable: 503), else undefined (a 500). */
  answerFor(err: unknown): HttpError | undefined;
}

/** The api as the http server builds it (ServerDeps.api): with the server's logger and accepting flag. */
export function apiFactory(deps: Omit<ApiDeps, 'log'>): (log: ApiLogger, accepting: () => boolean) => Api {
  return (log, accepting) => createApi({ ...deps, log }, accepting);
}

/** `accepting()` is false once the server stops taking new requests (GET /readyz says so). */
export function createApi(deps: ApiDeps, accepting: () => boolean): Api {
  const { config, pool, ledger, log } = deps;
  const fetchOptions: Partial<FetchImageOptions> = {
    connectTimeoutMs: config.fetchConnectTimeoutMs,
    totalTimeoutMs: config.fetchTimeoutMs,
    ...deps.fetchOptions,
  };
  const imageDeps = { maxImageBytes: config.maxImageBytes, fetchOptions };
  const removeDeps = { ...imageDeps, ledger, pool, log };
  const sandboxLimits = { ratePerMinute: config.sandboxRatePerMinute };
  const sandboxWindow = deps.sandboxWindow ?? new ClientWindow(sandboxLimits.ratePerMinute, MAX_CLIENTS_PER_WINDOW, deps.clock);
  const routes: Routes = {
    '/v1.0/removebg': { POST: (ctx) => handleRemoveBg(ctx, removeDeps) },
    ...(config.sandbox && { [SANDBOX_PATH]: { POST: sandboxHandler(removeDeps, sandboxLimits, sandboxWindow) } }),
    '/v1.0/account': { GET: (ctx) => handleAccount(ctx, ledger) },
    '/v1.0/improve': {
      POST: (ctx) => handleImprove(ctx, { ...imageDeps, ledger, improveDir: join(config.dataDir, 'improve'), improveQuotaBytes: config.improveQuotaBytes }),
    },
    '/healthz': { GET: (ctx) => handleHealth(ctx, pool, ledger) },
    '/readyz': { GET: (ctx) => handleReady(ctx, pool, ledger, accepting()) },
    ...(deps.metrics && { '/metrics': { GET: metricsHandler(deps.metrics, { token: config.metricsToken, host: config.host }) } }),
    // The demo page, the API docs and /openapi.json (read from disk on request, nothing loaded at start).
    ...webRoutes(),
  };
  return {
    routes,
    retryAfterSeconds: () => backlogSeconds(pool.stats()),
    answerFor: (err) => (isLedgerUnavailable(err) ? ledgerUnavailable() : undefined),
  };
}
