// One request's state, captured synchronously from uWS (HttpRequest dies when the callback returns).
// Owns the only onAborted registration and guards every later write: corked, at most once,
// never after the client went away. Owns the request's deadline too: when it passes, `signal`
// fires with the error the client gets (408 while the body arrives, 503 after), so every await
// of the handler (body, URL fetch, queue, worker) lets go and the finally blocks refund.
// Refuses ambiguous framing at the headers (request smuggling): see framingProblem.
// What api/ sees of a request: its headers, its fields (readFields: the body, bounded, parsed into
// http's own types), its signal and phase, and the corked answer. Imports nothing from api/.

import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { abortError, declaredLengthError, parseContentLength, readBody } from './body.js';
import { isRefusal, minUploadRate, type BodyBudget, type BodyHold, type BodyOwner } from './body-budget.js';
import { EarlyBody } from './early-body.js';
import type { MemoryPressure } from './memory-pressure.js';
import type { RawFields } from './fields.js';
import { parseForm } from './forms.js';
import { fieldCounter, type FieldCounter } from './field-limits.js';
import {
  bodiesBusy,
  bodyShareFull,
  deadlineExceeded,
  memoryBusy,
  invalidBody,
  requestTimeout,
  STATUS_TEXT,
  uploadTooSlow,
  type HttpError,
} from './http-error.js';
import { clientAddress } from './client-address.js';
import { requestIdFor } from './request-id.js';

/** Where a request is, for the deadline's choice of error and its log line. */
export type RequestPhase = 'headers' | 'body' | 'preparing' | 'queued' | 'running' | 'responding';

/**
 * What a handler tells the request's log line and metrics about its work. http/ only carries it
 * (server.ts hands it to the observers once the request is done).
 */
export interface RequestNotes {
  /** The account whose key was used (never the key). */
  accountId?: string;
  /** The result image's size. */
  width?: number;
  height?: number;
  /** The worker's stage timings in ms (what Server-Timing carries). */
  timings?: Readonly<Record<string, number>>;
  creditsCharged?: number;
  /** Why a 402/429/503 was given, where the error code alone does not say (e.g. 'sandbox_share'). */
  rejection?: string;
  /** A failed removal's cause in the library's own words (a decoder's), where the client got plainer ones. */
  cause?: string;
}

/** A route's handler: answers one request through its context. */
export type Handler = (ctx: RequestContext) => void | Promise<void>;

/** Path → method → handler (what the server routes; api/routes.ts builds it). */
export type Routes = Readonly<Record<string, Readonly<Record<string, Handler>>>>;

export interface ContextOptions {
  /** The largest request body (`--max-body-bytes`): checked on the declared length and on the bytes. */
  maxBodyBytes: number;
  /** The client disconnected (not called for a deadline). */
  onAbort?: (ctx: RequestContext) => void;
  /** Deadline from the first byte, in ms; none when absent. */
  timeoutMs?: number;
  /** The deadline passed before the response was written (the log line). */
  onDeadline?: (ctx: RequestContext) => void;
  /**
   * The minimum upload rate's window, ms (Config.uploadWindowMs): while the body is read, each window must
   * bring the body's minimum rate (body-budget.ts minUploadRate) × its length, or the request is answered 408.
   * None when absent.
   */
  uploadWindowMs?: number;
  /** An upload was answered 408 for its rate (the log line). */
  onSlowUpload?: (ctx: RequestContext) => void;
  /** Retry-After for a deadline 503, in seconds (from the pool's backlog). */
  retryAfterSeconds?: () => number;
  /** The process's cap on body bytes in memory and its shares; checked by readBody before the first byte. */
  bodyBudget?: BodyBudget;
  /** The process's resident memory against its limit; checked by readBody before the first byte (503 when high). */
  memoryPressure?: MemoryPressure;
  /** The client address is the last X-Forwarded-For entry (`--trust-proxy`). */
  trustProxy?: boolean;
}

/**
 * How long an early answer on a closing connection waits for the rest of the body (EarlyBody.drainThen):
 * a client still sending after that loses the answer to a reset, as it would without the wait.
 */
const LINGER_MS = 5_000;

/** How long after the deadline a handler may take to unwind before the answer is sent without it. */
const UNWIND_GRACE_MS = 1_000;

/**
 * How often a body being read restarts uWS's idle timer (EarlyBody.keepAlive). uSockets checks timers
 * every 4 s and closes 8–12 s after the last restart: 2.5 s keeps every upload that our rule lets through.
 */
const UPLOAD_KEEPALIVE_MS = 2_500;

let nextRequestId = 1;

/**
 * Why a request's framing headers are ambiguous, or null. uWS 20.30 takes the first of repeated
 * Content-Lengths and reads `identity` or `gzip, chunked` as chunked (NOTES-ENV), so a proxy in front
 * may see a different body, and what follows it would be read here as a second, smuggled request.
 */
export function framingProblem(headers: ReadonlyArray<readonly [string, string]>): string | null {
  const all = (name: string) => headers.filter(([k]) => k === name).map(([, v]) => v.trim());
  const lengths = all('content-length');
  const codings = all('transfer-encoding');
  if (lengths.some((v) => !/^\d{1,15}$/.test(v))) return 'Invalid Content-Length header.';
  if (new Set(lengths.map(Number)).size > 1) return `Conflicting Content-Length headers (${lengths.join(', ')}).`;
  if (codings.length > 0 && (codings.length > 1 || codings[0]!.toLowerCase() !== 'chunked')) {
    return 'Unsupported Transfer-Encoding: only a single "chunked" is accepted.';
  }
  if (codings.length > 0 && lengths.length > 0) return 'Both Content-Length and Transfer-Encoding given.';
  if (all('host').length > 1) return 'More than one Host header.';
  return null;
}

/**
 * Remote addresses with a request refused for its framing in this turn of the event loop. uWS parses
 * every request already received on a connection in one go, even after `end(…, true)`, and dispatches
 * each, so requests that follow a refused one from that address are never run: the connection is
 * closed after the 400 has been flushed (with two or more behind it, uWS closes it at once and the
 * 400 is lost too). uWS names no connection, so the address stands for it; other connections from the
 * same address lose only requests read in that same turn.
 */
const refusedThisTurn = new Set<string>();

export const COMMON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'X-Width, X-Height, X-Credits-Charged, X-Processing-Time-Ms, X-Dropin-Provider, X-Foreground-Top, X-Foreground-Left, X-Foreground-Width, X-Foreground-Height, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Max-Width, X-Max-Height, Retry-After, Server-Timing, X-Request-Id',
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
  /** Sequence number within this process, for log lines. */
  readonly id = nextRequestId++;
  readonly remoteAddress: string;
  /** The client's address: the socket's, or the proxy's X-Forwarded-For entry (`--trust-proxy`). */
  readonly clientAddress: string;
  /** The client's sane X-Request-Id, or a fresh UUID; sent back on every response. */
  readonly requestId: string;
  /** Body bytes read (0 until readFields). */
  bytesIn = 0;
  /**
   * Response body bytes: the answer's length, or as many as were handed to the kernel when the
   * client left (or a shutdown closed the connection) before the last one.
   */
  bytesOut = 0;
  /** The error code sent, when the answer was an error. */
  errorCode: string | undefined;
  /** What the handler did, for the log line and metrics. */
  readonly notes: RequestNotes = {};
  private readonly controller = new AbortController();
  private responded = false;
  private clientGone = false;
  /** An answer waiting for the rest of its body before it is written (see write). */
  private lingering: Promise<void> | null = null;
  private lingered: (() => void) | null = null;
  /** An answer being streamed (endStreamed): settles once its last byte is with the kernel or the client left. */
  private delivering: Promise<void> | null = null;
  private delivered: (() => void) | null = null;
  /** Body bytes of the streamed answer handed to the kernel so far, and its length. */
  private streamedBytes = 0;
  private streamTotal = 0;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  /** This request's body bytes in the budget; released once the request is done. */
  private bodyHold: BodyHold | undefined;
  /** Bytes of downloaded images this request holds in the budget (holdInput). */
  private heldInput = 0;
  /** Body chunks that arrive before the handler reads the body (it may await the ledger first). */
  private early: EarlyBody | undefined;
  /** The error sent for a passed deadline; undefined while the deadline holds. */
  expiredWith: HttpError | undefined;
  phase: RequestPhase = 'headers';
  /** Status written, or 0 while none was (or the client left first). */
  status = 0;

  constructor(
    private readonly res: HttpResponse,
    req: HttpRequest,
    private readonly opts: ContextOptions,
  ) {
    // onAborted first: after it fires `res` must never be touched again.
    res.onAborted(() => {
      this.clientGone = true;
      this.clearDeadline();
      this.releaseInputs();
      this.controller.abort(abortError());
      this.lingered?.();
      if (this.delivered) {
        this.bytesOut = this.streamedBytes; // cut: what got out, not what was meant to
        this.delivered();
      }
      opts.onAbort?.(this);
    });
    this.remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString();
    this.method = req.getMethod().toUpperCase();
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    const list: Array<[string, string]> = [];
    req.forEach((key, value) => {
      headers[key] = value;
      list.push([key, value]);
    });
    this.headers = headers;
    this.requestId = requestIdFor(headers['x-request-id']);
    this.clientAddress = clientAddress(this.remoteAddress, headers['x-forwarded-for'], opts.trustProxy === true);
    this.declaredLength = parseContentLength(headers['content-length']);
    if (this.refuseFraming(framingProblem(list))) return;
    if ((this.declaredLength !== null && this.declaredLength > 0) || headers['transfer-encoding'] !== undefined) this.early = new EarlyBody(res);
    if (opts.timeoutMs !== undefined) {
      this.deadlineTimer = setTimeout(() => this.expire(opts.timeoutMs!), opts.timeoutMs);
    }
  }

  /**
   * Answer ambiguous framing with 400 and close the connection, and close outright a request that
   * follows one refused from the same address in this turn. Returns true when the request is done.
   */
  private refuseFraming(problem: string | null): boolean {
    if (refusedThisTurn.has(this.remoteAddress)) {
      // Never run, never answered; the connection is closed once this turn's writes (the refusal's
      // 400) have gone out. Closing now would drop that answer with the rest of the cork buffer.
      this.responded = true;
      setImmediate(() => {
        if (!this.clientGone) this.res.close();
      });
      return true;
    }
    if (problem === null) return false;
    if (refusedThisTurn.size === 0) setImmediate(() => refusedThisTurn.clear());
    refusedThisTurn.add(this.remoteAddress);
    this.sendError(invalidBody(problem), {}, true);
    return true;
  }

  /** Fires when the client leaves or the deadline passes; its reason is what to throw. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The client went away: nobody to answer. */
  get aborted(): boolean {
    return this.clientGone;
  }

  /**
   * Resolves once the answer's last byte is with the kernel, or never will be (the client left, or
   * its connection was closed): after the handler for an answer that waits for the rest of its body
   * (at most LINGER_MS), and for as long as a slow reader takes the streamed body. The request counts
   * as in flight, for the drain and the metrics, until then: a shutdown closes connections only
   * after it (server.ts), and the kernel still delivers what it holds after the close.
   */
  async written(): Promise<void> {
    if (this.lingering) await this.lingering;
    if (this.delivering) await this.delivering;
  }

  /** Where a streamed answer stands, for the drain's log line: body bytes handed to the kernel, and the length. */
  get streamed(): { sent: number; total: number } | null {
    return this.delivering ? { sent: this.streamedBytes, total: this.streamTotal } : null;
  }

  get done(): boolean {
    return this.responded || this.clientGone;
  }

  /**
   * Count `bytes` more of this request's input (an image it downloads) against the budget its body
   * took from, until it is answered: the queue's memory is its inputs, whichever way they came.
   * Throws 503 service_busy when the budget cannot take them.
   */
  holdInput(bytes: number): void {
    const budget = this.opts.bodyBudget;
    if (!budget) return;
    if (this.done) throw abortError(); // its release already ran: nothing taken now would come back
    if (!budget.add(bytes)) throw bodiesBusy(budget.inUse, budget.limitBytes);
    this.heldInput += bytes;
  }

  /** This request's body and downloads back to the budget (once: the counts are zeroed). */
  private releaseInputs(): void {
    this.bodyHold?.release(); // idempotent
    if (this.heldInput > 0) this.opts.bodyBudget?.remove(this.heldInput);
    this.heldInput = 0;
  }

  private clearDeadline(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }

  private expire(timeoutMs: number): void {
    this.deadlineTimer = undefined;
    if (this.done) return;
    const err =
      this.phase === 'body' || this.phase === 'headers' ? requestTimeout(timeoutMs) : deadlineExceeded(timeoutMs, this.opts.retryAfterSeconds?.() ?? 1);
    this.expiredWith = err;
    this.opts.onDeadline?.(this);
    this.controller.abort(err);
    // The handler unwinds (refunds, frees its slot) and answers through dispatch's catch; if some
    // await ignores the signal, answer anyway: no client waits past its deadline by more than this.
    setTimeout(() => this.sendExpired(), UNWIND_GRACE_MS).unref();
  }

  /** Answer a passed deadline (once). A 408 closes the connection: its body may still be coming. */
  sendExpired(): boolean {
    const err = this.expiredWith;
    if (!err) return false;
    return this.sendError(err, {}, err.status === 408);
  }

  header(name: string): string | undefined {
    const v = this.headers[name];
    return v === undefined || v === '' ? undefined : v;
  }

  /** Throws the signal's reason (the client left, or the deadline's HttpError). */
  throwIfAborted(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /**
   * The body limit on the declared Content-Length (413, or 400 for a garbled one): `--max-body-bytes`,
   * or a sandbox body's smaller one (`owner` without a key). A handler calls it once it knows who asks
   * and before it holds anything (a slot, a rate unit), so an oversized upload costs nothing;
   * readFields checks it again for handlers that do not.
   */
  checkBodyLength(owner?: BodyOwner): void {
    const refused = declaredLengthError(this.declaredLength, this.bodyLimit(owner));
    if (refused) throw refused;
  }

  private bodyLimit(owner: BodyOwner | undefined): number {
    return Math.min(this.opts.maxBodyBytes, this.opts.bodyBudget?.largestBody(owner) ?? Infinity);
  }

  /**
   * Read the whole body (bounded, counted against the bodies-in-memory budget and `owner`'s share of
   * it: a key's, or without a key the sandbox's and its address's) and parse it into fields. Its fields
   * are counted as it arrives: one over the limit is answered without reading the rest.
   */
  async readFields(owner?: BodyOwner): Promise<RawFields> {
    const type = this.header('content-type');
    return parseForm(type, await this.readBody(owner, fieldCounter(type)));
  }

  private async readBody(owner: BodyOwner | undefined, counter: FieldCounter | undefined): Promise<Buffer> {
    const limit = this.bodyLimit(owner);
    this.checkBodyLength(owner); // a body that cannot fit takes no memory
    const pressure = this.opts.memoryPressure;
    if (!this.bodyHold && pressure?.high()) throw memoryBusy(pressure.rssBytes(), pressure.limitBytes);
    const budget = this.opts.bodyBudget;
    if (budget && !this.bodyHold) {
      // Refused before the first byte is read: the answer goes out and uWS skips the body.
      const hold = budget.take(this.declaredLength ?? limit, owner);
      if (isRefusal(hold)) {
        if (hold.refused === 'budget') throw bodiesBusy(hold.heldBytes, hold.limitBytes);
        this.notes.rejection = `body_share_${hold.refused}`;
        throw bodyShareFull(hold.refused, hold.heldBytes, hold.limitBytes);
      }
      if (this.done) hold.release();
      else this.bodyHold = hold;
    }
    this.phase = 'body';
    const stopWatch = this.watchUpload(this.bodyHold?.bytes ?? 0);
    try {
      const body = await readBody(this.early ?? this.res, {
        declaredLength: this.declaredLength,
        limit,
        signal: this.signal,
        ...(counter && { inspect: (received: Buffer) => counter.scan(received) }),
      });
      this.bytesIn = body.length;
      return body;
    } finally {
      stopWatch();
      if (this.phase === 'body') this.phase = 'preparing';
    }
  }

  /**
   * The minimum upload rate, while the body is read: every `uploadWindowMs` must bring the rate for
   * the `heldBytes` the body holds in the budget (minUploadRate: at least 16 kB/s, more for a larger
   * body) × the window (or the rest of the body), else 408, the connection closed and the bytes freed.
   * Meanwhile uWS's idle timer is restarted (it would close the connection without an answer, 8–12 s
   * into a body slower than 16 kB/s). Returns the stop.
   */
  private watchUpload(heldBytes: number): () => void {
    const early = this.early;
    const windowMs = this.opts.uploadWindowMs;
    if (!early || windowMs === undefined || early.complete) return () => {};
    const minBytes = Math.ceil((minUploadRate(heldBytes) * windowMs) / 1000);
    const tickMs = Math.min(UPLOAD_KEEPALIVE_MS, windowMs);
    let windowStart = performance.now();
    let mark = early.received;
    const timer = setInterval(() => {
      if (this.done || early.complete || this.signal.aborted) return void clearInterval(timer);
      const now = performance.now();
      if (now - windowStart >= windowMs) {
        const got = early.received - mark;
        if (got < minBytes) {
          clearInterval(timer);
          this.expiredWith = uploadTooSlow(got, windowMs, minBytes);
          this.opts.onSlowUpload?.(this);
          this.controller.abort(this.expiredWith); // readBody rejects with it; dispatch answers it (sendExpired)
          setTimeout(() => this.sendExpired(), UNWIND_GRACE_MS).unref();
          return;
        }
        windowStart = now;
        mark = early.received;
      }
      early.keepAlive();
    }, tickMs);
    return () => clearInterval(timer);
  }

  /** Write one complete response (corked). Returns false when the client is gone or it was sent already. */
  send(status: number, headers: Record<string, string>, body: string | Uint8Array, closeConnection = false): boolean {
    const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    // A HEAD answer has GET's Content-Length and no body: bytes after it would be read as the next response.
    // The length goes in as a plain header: uWS's endWithoutBody(length) then waits for those bytes and
    // never reads the connection's next request (and an undefined length is sent as 2^63). A refusal
    // that closes the connection says Content-Length: 0 instead; nothing follows it.
    if (this.method === 'HEAD') {
      if (closeConnection) return this.write(status, headers, 0, () => this.res.endWithoutBody(0, true), true);
      return this.write(status, { ...headers, 'Content-Length': String(bytes) }, 0, () => this.res.endWithoutBody());
    }
    if (closeConnection) return this.write(status, headers, bytes, () => this.res.end(body, true), true);
    return this.write(status, headers, bytes, () => this.endStreamed(typeof body === 'string' ? Buffer.from(body) : body));
  }

  // Every body goes out as the socket takes it, from its own buffer. res.end copies what the socket
  // cannot take at once into uWS's buffer: a second copy of most of a cutout PNG while the client
  // reads it (docs/memory.md), and bytes that closing the connection (a shutdown) throws away
  // unsent. tryEnd never buffers, and says when the last byte is with the kernel, which keeps it
  // after a close; onWritable carries on from the offset. (A body that fits uWS's 16 kB cork buffer
  // is done there and goes out as the cork ends: into a socket with room, unless a pipelined answer
  // before it is still unread.)
  private endStreamed(body: Uint8Array): void {
    const total = body.byteLength;
    if (this.res.tryEnd(body, total)[1]) return;
    this.streamTotal = total;
    this.streamedBytes = this.res.getWriteOffset();
    this.delivering = new Promise<void>((resolve) => {
      this.delivered = resolve; // the client leaving settles it too (onAborted)
      this.res.onWritable((offset) => {
        const [ok, done] = this.res.tryEnd(body.subarray(offset), total);
        if (!done) {
          this.streamedBytes = this.res.getWriteOffset();
          return ok;
        }
        this.streamedBytes = total;
        this.delivered = null;
        // After this callback returns: a cork around it would still hold the last bytes.
        setImmediate(resolve);
        return true;
      });
    });
  }

  /**
   * A response that has no body and no Content-Length (a 304: RFC 9110 §8.6 allows only the length
   * the 200 would have had, and uWS's end('') writes `Content-Length: 0`).
   */
  sendWithoutBody(status: number, headers: Record<string, string>): boolean {
    return this.write(status, headers, 0, () => this.res.endWithoutBody());
  }

  /**
   * `closing`: this answer closes the connection on purpose (a framing refusal, a 408 with the body
   * still coming): it goes at once, whatever is still on its way.
   */
  private write(status: number, headers: Record<string, string>, bodyBytes: number, end: () => void, closing = false): boolean {
    if (this.done) return false;
    this.responded = true;
    this.clearDeadline();
    this.releaseInputs();
    this.phase = 'responding';
    this.status = status;
    this.bytesOut = bodyBytes;
    const flush = () =>
      this.res.cork(() => {
        this.res.writeStatus(STATUS_TEXT[status] ?? String(status));
        for (const [k, v] of Object.entries(COMMON_HEADERS)) this.res.writeHeader(k, v);
        this.res.writeHeader('X-Request-Id', this.requestId);
        for (const [k, v] of Object.entries(headers)) this.res.writeHeader(k, v);
        this.early?.beforeAnswer();
        end();
      });
    if (!closing && this.early && !this.early.complete && this.closesAfterAnswer()) {
      // The answer waits for the rest of the body (bounded), or the close would reset the connection.
      this.lingering = new Promise<void>((resolve) => {
        this.lingered = resolve; // the client leaving ends the wait too (onAborted)
        this.early!.drainThen(
          () => {
            if (!this.clientGone) flush();
            // Called inside uWS's data callback, whose cork holds the answer until it returns: a
            // shutdown's close of every connection in this turn would drop it unsent.
            setImmediate(resolve);
          },
          this.opts.maxBodyBytes,
          LINGER_MS,
        );
      });
      return true;
    }
    this.early?.discard(); // answered without reading the body (or after): uWS skips the rest
    flush();
    return true;
  }

  /**
   * uWS closes the connection after this answer: the request said `Connection: close` (uWS tests for
   * a 5-character value). A client that sent `Expect: 100-continue` reads an early answer before it
   * sends its body (RFC 9110 §10.1.1), and a declared body over the limit is not worth reading.
   */
  private closesAfterAnswer(): boolean {
    if ((this.headers.connection ?? '').length !== 5) return false;
    if (this.headers.expect !== undefined) return false;
    return this.declaredLength === null || this.declaredLength <= this.opts.maxBodyBytes;
  }

  sendJson(status: number, value: unknown, headers: Record<string, string> = {}): boolean {
    return this.send(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers }, JSON.stringify(value));
  }

  /**
   * The error envelope. The connection stays open even when the body was not read: uWS skips the
   * rest of a framed body itself, and closing with unread input risks a TCP reset that eats the answer.
   */
  sendError(err: HttpError, extraHeaders: Record<string, string> = {}, closeConnection = false): boolean {
    if (!this.done) this.errorCode = err.code;
    return this.send(err.status, { 'Content-Type': 'application/json; charset=utf-8', ...extraHeaders, ...err.headers }, JSON.stringify(err), closeConnection);
  }
}
