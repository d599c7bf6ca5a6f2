// One request's state, captured synchronously from uWS (HttpRequest dies when the callback returns).
// Owns the only onAborted registration and guards every later write: corked, at most once,
// never after the client went away.

import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { STATUS_TEXT, type ApiError } from '../api/errors.js';
import { abortError, parseContentLength, readBody } from './body.js';

export const COMMON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'X-Width, X-Height, X-Credits-Charged, X-Processing-Time-Ms, X-Dropin-Provider, X-Foreground-Top, X-Foreground-Left, X-Foreground-Width, X-Foreground-Height, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Max-Width, X-Max-Height, Retry-After',
});

export class RequestContext {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: string;
  /** Lower-cased header names → values (last one wins). */
  readonly headers: Readonly<Record<string, string>>;
  readonly declaredLength: number | null;
  readonly startedAt = performance.now();
  private readonly controller = new AbortController();
  private responded = false;
  /** Status written, or 0 while none was (or the client left first). */
  status = 0;

  constructor(private readonly res: HttpResponse, req: HttpRequest, onAbort?: (ctx: RequestContext) => void) {
    // onAborted first: after it fires `res` must never be touched again.
    res.onAborted(() => {
      this.controller.abort(abortError());
      onAbort?.(this);
    });
    this.method = req.getMethod().toUpperCase();
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      headers[key] = value;
    });
    this.headers = headers;
    this.declaredLength = parseContentLength(headers['content-length']);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  get done(): boolean {
    return this.responded || this.aborted;
  }

  header(name: string): string | undefined {
    const v = this.headers[name];
    return v === undefined || v === '' ? undefined : v;
  }

  throwIfAborted(): void {
    if (this.aborted) throw abortError();
  }

  readBody(limit: number): Promise<Buffer> {
    return readBody(this.res, { declaredLength: this.declaredLength, limit, signal: this.signal });
  }

  /** Write one complete response (corked). Returns false when the client is gone or it was sent already. */
  send(status: number, headers: Record<string, string>, body: string | Uint8Array, closeConnection = false): boolean {
    if (this.done) return false;
    this.responded = true;
    this.status = status;
    this.res.cork(() => {
      this.res.writeStatus(STATUS_TEXT[status] ?? String(status));
      for (const [k, v] of Object.entries(COMMON_HEADERS)) this.res.writeHeader(k, v);
      for (const [k, v] of Object.entries(headers)) this.res.writeHeader(k, v);
      this.res.end(body, closeConnection);
    });
    return true;
  }

  sendJson(status: number, value: unknown, headers: Record<string, string> = {}): boolean {
    return this.send(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers }, JSON.stringify(value));
  }

  /**
   * The error envelope. The connection stays open even when the body was not read: uWS skips the
   * rest of a framed body itself, and closing with unread input risks a TCP reset that eats the answer.
   */
  sendError(err: ApiError, extraHeaders: Record<string, string> = {}): boolean {
    return this.send(
      err.status,
      { 'Content-Type': 'application/json; charset=utf-8', ...extraHeaders, ...err.headers },
      JSON.stringify(err),
    );
  }
}
