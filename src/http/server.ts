// The HTTP service on uWebSockets.js: the try/catch perimeter, routing (404/405/CORS preflight) to
// the api's route table, and a listen/close lifecycle that drains in-flight requests. The route table
// comes from the caller (ServerDeps.api, built by api/routes.ts), so http/ imports nothing above it.

import { randomUUID } from 'node:crypto';
import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import type { Config } from '../config.js';
import type { MemoryPressure } from './memory-pressure.js';
import { BodyBudget } from './body-budget.js';
import { RequestContext, type ContextOptions, type RequestNotes, type Routes } from './context.js';
import { HttpError, internalError, methodNotAllowed, notFound, shuttingDown } from './http-error.js';
import { assertNativeUws } from './native-check.js';
import { sslAppOptions } from './tls.js';

export interface Logger {
  info(msg: string): void;
  error(msg: string, err?: unknown): void;
}

export const consoleLogger: Logger = {
  info: (msg) => console.log(msg),
  error: (msg, err) => console.error(msg, err instanceof Error ? err.stack : (err ?? '')),
};

/**
 * uWS.js 20.30 takes `listen(host, port, options, cb)` and exports the options' values
 * (LIBUS_LISTEN_EXCLUSIVE_PORT: no SO_REUSEPORT), but its .d.ts declares neither.
 */
type ListenWithOptions = (host: string, port: number, options: number, cb: (token: us_listen_socket | false) => void) => TemplatedApp;
const LISTEN_DEFAULT = 0;
const LISTEN_EXCLUSIVE_PORT = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: number }).LIBUS_LISTEN_EXCLUSIVE_PORT ?? 1;

/** What the server asks of the api it serves (api/routes.ts builds one). */
export interface ServedApi {
  routes: Routes;
  /** Retry-After, in seconds, for a request whose deadline passed once its body was in. */
  retryAfterSeconds(): number;
  /** The answer for a failure that is not an HttpError but has one, else undefined (a 500). */
  answerFor(err: unknown): HttpError | undefined;
}

/**
 * Builds the api once the server has its logger and its accepting flag (`accepting()` is false once
 * the server stops taking new requests). The caller passes it in, so http/ imports nothing of api/.
 */
export type ApiFactory = (log: Logger, accepting: () => boolean) => ServedApi;

/** The config, the api to serve, a logger, and observation hooks. */
export interface ServerDeps {
  config: Config;
  api: ApiFactory;
  log?: Logger;
  /** Observation points (tests): never affect the response. */
  hooks?: ServerHooks;
  /** Told of every finished request (observe/: metrics, the request log); never affect the response. */
  observers?: readonly RequestObserver[];
  /**
   * Listen with SO_REUSEPORT, as the processes of `serve --processes N` do to share one port.
   * Otherwise the port is taken exclusively: a second server started on it by mistake fails to
   * start instead of silently taking every other connection (with its own ledger and keys).
   */
  sharePort?: boolean;
  /** This process's resident memory against its limit: new bodies get 503 while it is high (context.ts). */
  memoryPressure?: MemoryPressure;
}

export interface RequestInfo {
  method: string;
  path: string;
  /** The route table's path the request matched; null for an unknown path. */
  route: string | null;
  /** Status sent; 0 when the client went away first. */
  status: number;
  aborted: boolean;
  /** The request's deadline passed before it was answered otherwise. */
  timedOut: boolean;
  /** Sent back as X-Request-Id. */
  requestId: string;
  clientAddress: string;
  /** From the first byte to now (the request's end, or its abort). */
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  /** The error code sent, when the answer was an error. */
  errorCode: string | undefined;
  /** What the handler did (account, output size, stage timings, credits). */
  notes: Readonly<RequestNotes>;
}

/** Records each request once it is completely done (credits settled, slot released). */
export interface RequestObserver {
  onRequestEnd(info: RequestInfo): void;
}

export interface ServerHooks {
  /** The client disconnected before the response was written. */
  onAbort?(info: RequestInfo): void;
  /** The handler is completely done (credits settled or refunded, slot released). */
  onRequestEnd?(info: RequestInfo): void;
}

export interface CutoutServer {
  /** Bind host:port (port 0 = any free port). Resolves with the bound port. */
  listen(): Promise<number>;
  /** The bound port (after listen). */
  readonly port: number;
  /** `http(s)://host:port` (after listen). */
  readonly url: string;
  /** Requests currently being handled. */
  readonly inflight: number;
  /** Request bodies and downloads in memory: the budget and its shares (http/body-budget.ts). */
  readonly bodyBudget: BodyBudget;
  /** Resolves when no request is in flight. */
  whenIdle(): Promise<void>;
  /**
   * Stop accepting, let in-flight requests finish for up to `config.drainTimeoutMs` (an answer is in
   * flight until its last byte is with the kernel), then close every connection (a request still in
   * flight sees its client leave: refunded, slot freed; an answer still streaming is cut, and logged
   * with the bytes it got). Pool and ledger stay open (the caller owns them).
   */
  close(): Promise<void>;
}

/** After the drain deadline closed the connections, how long handlers get to unwind (refunds) before close() resolves anyway. */
const UNWIND_GRACE_MS = 1_000;

/** The drain deadline's line for one request it cuts: where it was, and for an answer, how much of it got out. */
function cutLine(ctx: RequestContext): string {
  const head = `drain: cutting request #${ctx.id} ${ctx.method} ${ctx.path} from ${ctx.remoteAddress} while ${ctx.phase}`;
  const streamed = ctx.streamed;
  if (streamed) return `${head}: ${streamed.sent} of ${streamed.total} body bytes sent (status ${ctx.status})`;
  return ctx.phase === 'responding' ? head : `${head}; credits held are refunded`;
}

/** Resolves true when `p` settles within `ms`, false otherwise; leaves no timer behind. */
function within(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([p.then(() => true), late]).finally(() => clearTimeout(timer));
}

const CORS_PREFLIGHT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'X-Api-Key, Content-Type, Accept, Authorization',
  'Access-Control-Max-Age': '86400',
});

/** What a path answers, for Allow: its routed methods, HEAD wherever GET is, and OPTIONS. */
function allowedMethods(route: Readonly<Record<string, unknown>>): string[] {
  const methods = Object.keys(route);
  return [...methods, ...(route.GET && !route.HEAD ? ['HEAD'] : []), 'OPTIONS'];
}

/** What a request was and how it went, for the observers and hooks; `route` is the path it matched (null: none). */
function requestInfo(ctx: RequestContext, route: string | null): RequestInfo {
  return {
    method: ctx.method,
    path: ctx.path,
    route,
    status: ctx.status,
    aborted: ctx.aborted,
    timedOut: ctx.expiredWith !== undefined,
    requestId: ctx.requestId,
    clientAddress: ctx.clientAddress,
    durationMs: performance.now() - ctx.startedAt,
    bytesIn: ctx.bytesIn,
    bytesOut: ctx.bytesOut,
    errorCode: ctx.errorCode,
    notes: ctx.notes,
  };
}

/** Tells the observers and hooks about requests; nothing they do or throw reaches the answer or uWS. */
class RequestReport {
  /** The route each request matched (read by the observers when it ends). */
  readonly matched = new WeakMap<RequestContext, string>();

  constructor(
    private readonly log: Logger,
    readonly hooks: ServerHooks,
    private readonly observers: readonly RequestObserver[],
  ) {}

  hook(fn: ((i: RequestInfo) => void) | undefined, ctx: RequestContext): void {
    try {
      fn?.(this.info(ctx));
    } catch (err) {
      this.log.error('server hook failed', err);
    }
  }

  /** The request is completely done (answer written, credits settled, slot released). */
  ended(ctx: RequestContext): void {
    if (this.observers.length > 0) {
      const done = this.info(ctx);
      for (const o of this.observers) {
        try {
          o.onRequestEnd(done);
        } catch (err) {
          this.log.error('request observer failed', err);
        }
      }
    }
    this.hook(this.hooks.onRequestEnd, ctx);
  }

  private info(ctx: RequestContext): RequestInfo {
    return requestInfo(ctx, this.matched.get(ctx) ?? null);
  }
}

/** The requests in flight: how many, for whenIdle and the drain, and which, for the drain deadline's lines. */
class InFlight {
  private readonly live = new Set<RequestContext>();
  private idleWaiters: Array<() => void> = [];

  get count(): number {
    return this.live.size;
  }

  get requests(): Iterable<RequestContext> {
    return this.live;
  }

  add(ctx: RequestContext): void {
    this.live.add(ctx);
  }

  remove(ctx: RequestContext): void {
    this.live.delete(ctx);
    if (this.live.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  whenIdle(): Promise<void> {
    return this.live.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}

/** What routing a request needs: the api it serves, the log, where the matched route is kept, and whether the server is closing. */
interface Router {
  api: ServedApi;
  log: Logger;
  report: RequestReport;
  closing(): boolean;
}

/** Routes one request to its handler (404/405/CORS preflight here) and answers whatever it throws. */
async function dispatch(ctx: RequestContext, router: Router): Promise<void> {
  if (ctx.done) return; // refused at its headers (context.ts: framingProblem)
  try {
    const path = ctx.path.length > 1 && ctx.path.endsWith('/') ? ctx.path.slice(0, -1) : ctx.path;
    const route = router.api.routes[path];
    if (!route) throw notFound(path);
    router.report.matched.set(ctx, path);
    if (ctx.method === 'OPTIONS') {
      ctx.sendWithoutBody(204, { ...CORS_PREFLIGHT_HEADERS, Allow: allowedMethods(route).join(', ') }); // RFC 9110 §8.6: no Content-Length on a 204
      return;
    }
    // HEAD is GET without the body (RFC 9110 §9.3.2): context.send writes GET's headers and no bytes.
    const handler = route[ctx.method] ?? (ctx.method === 'HEAD' ? route.GET : undefined);
    if (!handler) throw methodNotAllowed(ctx.method, path, allowedMethods(route));
    if (router.closing() && (path.startsWith('/v1.0/') || path.startsWith('/sandbox/'))) throw shuttingDown();
    await handler(ctx);
    if (!ctx.done) throw new Error(`handler for ${ctx.method} ${path} returned without responding`);
  } catch (err) {
    answerFailure(ctx, err, router);
  }
}

/** The answer for what a handler threw: its HttpError, the api's mapping of it, or a 500 (logged). */
function answerFailure(ctx: RequestContext, err: unknown, { api, log }: Router): void {
  if (ctx.aborted) return; // nobody to answer; the handler's finally blocks already refunded
  if (ctx.expiredWith) {
    ctx.sendExpired(); // whatever the handler threw on its way out, the client gets the deadline's error
    return;
  }
  const answer = err instanceof HttpError ? err : api.answerFor(err);
  if (answer) {
    if (!(err instanceof HttpError))
      log.info(`${answer.status} ${answer.code} on request #${ctx.id} ${ctx.method} ${ctx.path}: ${(err as Error)?.message ?? String(err)}`);
    ctx.sendError(answer);
  } else {
    log.error(`500 on ${ctx.method} ${ctx.path}`, err);
    ctx.sendError(internalError());
  }
}

/** What every request's context is given: the body limits and budget, the deadline and upload rate, and their log lines. */
function contextOptions(deps: ServerDeps, log: Logger, api: ServedApi, bodyBudget: BodyBudget, report: RequestReport): ContextOptions {
  const { config } = deps;
  const onAbort = report.hooks.onAbort;
  return {
    maxBodyBytes: config.maxBodyBytes,
    timeoutMs: config.requestTimeoutMs,
    ...(onAbort && { onAbort: (c: RequestContext) => report.hook(onAbort, c) }),
    onDeadline: (c) =>
      log.info(
        `deadline: request #${c.id} ${c.method} ${c.path} from ${c.remoteAddress} passed ${config.requestTimeoutMs / 1000} s while ${c.phase}; ` +
          `answered ${c.expiredWith?.status ?? 0}${c.phase === 'body' || c.phase === 'headers' ? '' : ', credits refunded'}`,
      ),
    uploadWindowMs: config.uploadWindowMs,
    onSlowUpload: (c) =>
      log.info(
        `upload: request #${c.id} ${c.method} ${c.path} from ${c.remoteAddress} sent its body slower than its minimum rate ` +
          `(${c.expiredWith?.detail ?? ''}); answered 408 and closed the connection`,
      ),
    retryAfterSeconds: api.retryAfterSeconds,
    bodyBudget,
    ...(deps.memoryPressure && { memoryPressure: deps.memoryPressure }),
    trustProxy: config.trustProxy,
  };
}

/** Binds host:port on `app`; resolves with the listen socket and the port it got. */
function listenOn(app: TemplatedApp, config: Config, sharePort: boolean): Promise<{ token: us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    const listen = app.listen.bind(app) as unknown as ListenWithOptions;
    listen(config.host, config.port, sharePort ? LISTEN_DEFAULT : LISTEN_EXCLUSIVE_PORT, (token) => {
      if (!token) {
        reject(new Error(`Could not listen on ${config.host}:${config.port} (in use or not permitted)`));
        return;
      }
      resolve({ token, port: uWS.us_socket_local_port(token as unknown as uWS.us_socket) });
    });
  });
}

class UwsServer implements CutoutServer {
  readonly bodyBudget: BodyBudget;
  private closing = false;
  private readonly router: Router;
  private readonly app: TemplatedApp;
  private readonly inFlight = new InFlight();
  private listenSocket: us_listen_socket | null = null;
  private boundPort = -1;

  constructor(
    private readonly deps: ServerDeps,
    private readonly log: Logger,
  ) {
    const { config } = deps;
    const api = deps.api(log, () => !this.closing);
    const report = new RequestReport(log, deps.hooks ?? {}, deps.observers ?? []);
    this.router = { api, log, report, closing: () => this.closing };
    // No `uWebSockets: 20` header on any response (undocumented switch of uWS.js; process-wide).
    uWS._cfg('silent');
    this.app = config.tlsCert && config.tlsKey ? uWS.SSLApp(sslAppOptions(config.tlsCert, config.tlsKey)) : uWS.App();
    this.bodyBudget = new BodyBudget(config.bodyMemoryBytes, config.maxBodyBytes);
    const options = contextOptions(deps, log, api, this.bodyBudget, report);
    this.app.any('/*', (res: HttpResponse, req: HttpRequest) => this.accept(res, req, options));
  }

  /** The perimeter: no exception may cross back into uWS. */
  private accept(res: HttpResponse, req: HttpRequest, options: ContextOptions): void {
    let ctx: RequestContext;
    try {
      ctx = new RequestContext(res, req, options);
    } catch (err) {
      this.log.error('failed to read request', err);
      res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('X-Request-Id', randomUUID()).end());
      return;
    }
    this.inFlight.add(ctx);
    dispatch(ctx, this.router)
      .catch((err) => this.log.error('unhandled error in dispatch', err))
      .then(() => ctx.written())
      .finally(() => {
        this.inFlight.remove(ctx);
        this.router.report.ended(ctx);
      });
  }

  async listen(): Promise<number> {
    const { token, port } = await listenOn(this.app, this.deps.config, this.deps.sharePort ?? false);
    this.listenSocket = token;
    this.boundPort = port;
    return port;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    const { host, tlsCert } = this.deps.config;
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    return `${tlsCert ? 'https' : 'http'}://${shown.includes(':') ? `[${shown}]` : shown}:${this.boundPort}`;
  }

  get inflight(): number {
    return this.inFlight.count;
  }

  whenIdle(): Promise<void> {
    return this.inFlight.whenIdle();
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.listenSocket) {
      uWS.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
    const { drainTimeoutMs } = this.deps.config;
    const drained = await within(this.whenIdle(), drainTimeoutMs);
    if (!drained) {
      this.log.info(`drain: ${this.inflight} request(s) still in flight after ${drainTimeoutMs / 1000} s (--drain-timeout); closing their connections`);
      for (const ctx of this.inFlight.requests) this.log.info(cutLine(ctx));
    }
    // Closes every connection: idle keep-alive ones would hold the loop open, and a request still
    // in flight sees its client leave (onAborted), so its handler refunds and frees its slot.
    // Each answer drained before it is with the kernel, which sends it after the close (a FIN
    // behind the data, not a reset: measured with a reader slower than the close).
    (this.app as TemplatedApp & { close(): void }).close();
    if (!drained && !(await within(this.whenIdle(), UNWIND_GRACE_MS))) {
      this.log.error(`drain: ${this.inflight} request(s) still unwinding after their connections closed; stopping without them`);
    }
  }
}

export function createServer(deps: ServerDeps): CutoutServer {
  assertNativeUws();
  return new UwsServer(deps, deps.log ?? consoleLogger);
}
