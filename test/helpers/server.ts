// Start a real cutout server on 127.0.0.1:0 for a test, with fakes unless told otherwise.

import type { Test } from 'tap';
import { loadConfig, type Config } from '../../src/config.js';
import type { FetchImageOptions } from '../../src/fetch/image-url.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import type { RemovalPool } from '../../src/pool/pool-api.js';
import { createServer, type CutoutServer, type Logger, type RequestInfo, type RequestObserver, type ServerHooks } from '../../src/http/server.js';
import type { MetricsSource } from '../../src/api/metrics-endpoint.js';
import { apiFactory } from '../../src/api/routes.js';
import { FakeLedger } from './fake-ledger.js';
import { FakePool } from './fake-pool.js';
import { documentedOrigins } from './documented-origins.js';
import type { MemoryPressure } from '../../src/http/memory-pressure.js';

export const KEY = 'test-key-0123456789';

export const quietLogger: Logger & { errors: unknown[] } = {
  errors: [],
  info() {},
  error(_msg, err) {
    quietLogger.errors.push(err);
  },
};

/** Promises for server-side events, so tests wait on events instead of sleeping. */
export class ServerEvents implements ServerHooks {
  private waiters: Array<{ kind: 'abort' | 'end'; match: (i: RequestInfo) => boolean; resolve: (i: RequestInfo) => void }> = [];
  readonly ended: RequestInfo[] = [];
  onAbort = (i: RequestInfo) => this.fire('abort', i);
  onRequestEnd = (i: RequestInfo) => {
    this.ended.push(i);
    this.fire('end', i);
  };
  private fire(kind: 'abort' | 'end', i: RequestInfo) {
    this.waiters = this.waiters.filter((w) => {
      if (w.kind !== kind || !w.match(i)) return true;
      w.resolve(i);
      return false;
    });
  }
  /** Next client disconnect (optionally on a path). Register BEFORE triggering it. */
  nextAbort(path?: string): Promise<RequestInfo> {
    return new Promise((resolve) => this.waiters.push({ kind: 'abort', match: (i) => !path || i.path === path, resolve }));
  }
  /** Next fully finished request (optionally on a path). Register BEFORE triggering it. */
  nextEnd(path?: string): Promise<RequestInfo> {
    return new Promise((resolve) => this.waiters.push({ kind: 'end', match: (i) => !path || i.path === path, resolve }));
  }
}

export interface TestServer<P extends RemovalPool = FakePool, L extends Ledger = FakeLedger> {
  events: ServerEvents;
  server: CutoutServer;
  url: string;
  pool: P;
  ledger: L;
  config: Config;
}

export interface TestServerOptions<P, L> {
  pool?: P;
  ledger?: L;
  config?: Partial<Config>;
  fetchOptions?: Partial<FetchImageOptions>;
  log?: Logger;
  /** What GET /metrics serves (observe/metrics.ts); no /metrics route without it. */
  metrics?: MetricsSource;
  /** Told of every finished request (metrics, the request log). */
  observers?: RequestObserver[];
  /** Wall clock of the sandbox's per-client window. */
  clock?: () => number;
  /** The process's memory against its limit (new bodies get 503 while high). */
  memoryPressure?: MemoryPressure;
}

export async function startTestServer<P extends RemovalPool = FakePool, L extends Ledger = FakeLedger>(
  t: Test,
  opts: TestServerOptions<P, L> = {},
): Promise<TestServer<P, L>> {
  const pool = (opts.pool ?? new FakePool()) as P;
  let ledger = opts.ledger as L | undefined;
  if (!ledger) {
    const fake = new FakeLedger();
    fake.addAccount(KEY, { credits: 100 });
    ledger = fake as unknown as L;
  }
  const config: Config = Object.freeze({
    ...loadConfig([], {}),
    host: '127.0.0.1',
    port: 0,
    demoKey: false,
    ...opts.config,
    dataDir: opts.config?.dataDir ?? t.testdir(),
  });
  const events = new ServerEvents();
  const api = apiFactory({
    config,
    pool,
    ledger,
    ...(opts.fetchOptions && { fetchOptions: opts.fetchOptions }),
    ...(opts.metrics && { metrics: opts.metrics }),
    ...(opts.clock && { clock: opts.clock }),
  });
  const server = createServer({
    config,
    api,
    hooks: events,
    log: opts.log ?? quietLogger,
    ...(opts.observers && { observers: opts.observers }),
    ...(opts.memoryPressure && { memoryPressure: opts.memoryPressure }),
  });
  await server.listen();
  documentedOrigins.add(new URL(server.url).origin); // every response it gives must match /openapi.json
  t.teardown(() => server.close());
  return { events, server, url: server.url, pool, ledger, config };
}
