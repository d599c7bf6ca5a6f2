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
  error: (msg, err) => console.error(msg, err instanceof Error ? err.stack : err ?? ''),
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

export function createServer(deps: ServerDeps): CutoutServer {
  assertNativeUws();
  const { config } = deps;
  const log = deps.log ?? consoleLogger;
  let closing = false;
  const api = deps.api(log, () => !closing);
  const routes = api.routes;

  let inflight = 0;
  /** The requests in flight, for the drain deadline's lines. */
  const live = new Set<RequestContext>();
  let idleWaiters: Array<() => void> = [];
  const settle = () => {
    inflight--;
    if (inflight === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  /** The route each request matched (read by the observers when it ends). */
  const matched = new WeakMap<RequestContext, string>();

  async function dispatch(ctx: RequestContext): Promise<void> {
    if (ctx.done) return; // refused at its headers (context.ts: framingProblem)
    try {
      const path = ctx.path.length > 1 && ctx.path.endsWith('/') ? ctx.path.slice(0, -1) : ctx.path;
      const route = routes[path];
      if (!route) throw notFound(path);
      matched.set(ctx, path);
      if (ctx.method === 'OPTIONS') {
        ctx.sendWithoutBody(204, { ...CORS_PREFLIGHT_HEADERS, Allow: allowedMethods(route).join(', ') }); // RFC 9110 §8.6: no Content-Length on a 204
        return;
      }
      // HEAD is GET without the body (RFC 9110 §9.3.2): context.send writes GET's headers and no bytes.
      const handler = route[ctx.method] ?? (ctx.method === 'HEAD' ? route.GET : undefined);
      if (!handler) throw methodNotAllowed(ctx.method, path, allowedMethods(route));
      if (closing && (path.startsWith('/v1.0/') || path.startsWith('/sandbox/'))) throw shuttingDown();
      await handler(ctx);
      if (!ctx.done) throw new Error(`handler for ${ctx.method} ${path} returned without responding`);
    } catch (err) {
      if (ctx.aborted) return; // nobody to answer; the handler's finally blocks already refunded
      if (ctx.expiredWith) {
        ctx.sendExpired(); // whatever the handler threw on its way out, the client gets the deadline's error
        return;
      }
      const answer = err instanceof HttpError ? err : api.answerFor(err);
      if (answer) {
        if (!(err instanceof HttpError)) log.info(`${answer.status} ${answer.code} on request #${ctx.id} ${ctx.method} ${ctx.path}: ${(err as Error)?.message ?? String(err)}`);
        ctx.sendError(answer);
      } else {
        log.error(`500 on ${ctx.method} ${ctx.path}`, err);
        ctx.sendError(internalError());
      }
    }
  }

  // No `uWebSockets: 20` header on any response (undocumented switch of uWS.js; process-wide).
  uWS._cfg('silent');
  const app: TemplatedApp = config.tlsCert && config.tlsKey ? uWS.SSLApp(sslAppOptions(config.tlsCert, config.tlsKey)) : uWS.App();

  const hooks = deps.hooks ?? {};
  const observers = deps.observers ?? [];
  const info = (ctx: RequestContext): RequestInfo => ({
    method: ctx.method,
    path: ctx.path,
    route: matched.get(ctx) ?? null,
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
  });
  const observe = (ctx: RequestContext) => {
    if (observers.length === 0) return;
    const done = info(ctx);
    for (const o of observers) {
      try {
        o.onRequestEnd(done);
      } catch (err) {
        log.error('request observer failed', err);
      }
    }
  };
  const callHook = (fn: ((i: RequestInfo) => void) | undefined, ctx: RequestContext) => {
    try {
      fn?.(info(ctx));
    } catch (err) {
      log.error('server hook failed', err);
    }
  };

  const bodyBudget = new BodyBudget(config.bodyMemoryBytes, config.maxBodyBytes);
  const contextOptions: ContextOptions = {
    maxBodyBytes: config.maxBodyBytes,
    timeoutMs: config.requestTimeoutMs,
    ...(hooks.onAbort && { onAbort: (c: RequestContext) => callHook(hooks.onAbort, c) }),
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

  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    // Perimeter: no exception may cross back into uWS.
    let ctx: RequestContext;
    try {
      ctx = new RequestContext(res, req, contextOptions);
    } catch (err) {
      log.error('failed to read request', err);
      res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('X-Request-Id', randomUUID()).end());
      return;
    }
    inflight++;
    live.add(ctx);
    dispatch(ctx)
      .catch((err) => log.error('unhandled error in dispatch', err))
      .then(() => ctx.written())
      .finally(() => {
        live.delete(ctx);
        settle();
        observe(ctx);
        callHook(hooks.onRequestEnd, ctx);
      });
  });

  let listenSocket: us_listen_socket | null = null;
  let boundPort = -1;
  const scheme = config.tlsCert ? 'https' : 'http';

  return {
    listen() {
      return new Promise<number>((resolve, reject) => {
        const listen = app.listen.bind(app) as unknown as ListenWithOptions;
        listen(config.host, config.port, deps.sharePort ? LISTEN_DEFAULT : LISTEN_EXCLUSIVE_PORT, (token) => {
          if (!token) {
            reject(new Error(`Could not listen on ${config.host}:${config.port} (in use or not permitted)`));
            return;
          }
          listenSocket = token;
          boundPort = uWS.us_socket_local_port(token as unknown as uWS.us_socket);
          resolve(boundPort);
        });
      });
    },
    get port() {
      return boundPort;
    },
    get url() {
      const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
      return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
    },
    get inflight() {
      return inflight;
    },
    bodyBudget,
    whenIdle() {
      return inflight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      closing = true;
      if (listenSocket) {
        uWS.us_listen_socket_close(listenSocket);
        listenSocket = null;
      }
      const drained = await within(this.whenIdle(), config.drainTimeoutMs);
      if (!drained) {
        log.info(`drain: ${inflight} request(s) still in flight after ${config.drainTimeoutMs / 1000} s (--drain-timeout); closing their connections`);
        for (const ctx of live) log.info(cutLine(ctx));
      }
      // Closes every connection: idle keep-alive ones would hold the loop open, and a request still
      // in flight sees its client leave (onAborted), so its handler refunds and frees its slot.
      // Each answer drained before it is with the kernel, which sends it after the close (a FIN
      // behind the data, not a reset: measured with a reader slower than the close).
      (app as TemplatedApp & { close(): void }).close();
      if (!drained && !(await within(this.whenIdle(), UNWIND_GRACE_MS))) {
        log.error(`drain: ${inflight} request(s) still unwinding after their connections closed; stopping without them`);
      }
    },
  };
}
