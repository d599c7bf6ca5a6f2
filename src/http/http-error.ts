// HttpError: an answer in the service's error envelope ({"errors":[{title,code,detail}]}, remove.bg's),
// and the failures the transport raises itself: ambiguous framing, a body over its limit or over the
// bodies-in-memory cap, a malformed body or one with too many fields, a passed deadline, no route,
// shutting down, an unexpected error. remove.bg's own rules raise ApiError (api/errors.ts), an
// HttpError too. Pure: no I/O, no uWS.

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** Extra response headers (Retry-After on 429/503, Allow on 405). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: string, title: string, detail?: string, headers: Record<string, string> = {}) {
    super(detail ? `${title}: ${detail}` : title);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.title = title;
    this.detail = detail;
    this.headers = headers;
  }

  /** The wire body: `{"errors":[{"title","code","detail"}]}` (detail omitted when absent). */
  toJSON(): { errors: Array<{ title: string; code: string; detail?: string }> } {
    const entry: { title: string; code: string; detail?: string } = { title: this.title, code: this.code };
    if (this.detail !== undefined) entry.detail = this.detail;
    return { errors: [entry] };
  }
}

export const STATUS_TEXT: Readonly<Record<number, string>> = Object.freeze({
  200: '200 OK',
  204: '204 No Content',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  408: '408 Request Timeout',
  413: '413 Payload Too Large',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
});

const MB = 1024 * 1024;

/** Human size for details: remove.bg writes "22MB". */
export function formatMegabytes(bytes: number): string {
  const mb = bytes / MB;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)}MB`;
}

/** Human size for any amount: bytes, KB or MB (one decimal at most). */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < MB) return `${Number((bytes / 1024).toFixed(1))}KB`;
  return `${Number((bytes / MB).toFixed(1))}MB`;
}

const formatSeconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`;

const retryAfter = (seconds: number): Record<string, string> => ({ 'Retry-After': String(Math.max(1, Math.ceil(seconds))) });

/** The body could not be parsed at all (bad JSON, broken multipart, unknown content type) or its framing is ambiguous. */
export function invalidBody(detail: string): HttpError {
  return new HttpError(400, 'invalid_request_body', 'Invalid request body', detail);
}

/** The body holds more fields than http/field-limits.ts allows (`what`: which kind it counted). */
export function tooManyFields(limit: number, what: string): HttpError {
  return new HttpError(400, 'too_many_fields', 'Too many fields', `The request body has more than ${limit} ${what}.`);
}

/** The request body is over `--max-body-bytes` (remove.bg's code; 413 rather than its 400: docs/http.md). */
export function bodyTooLarge(limitBytes: number): HttpError {
  return new HttpError(413, 'file_too_large', 'File too large', `Request body exceeds limit of ${formatMegabytes(limitBytes)}`);
}

/** This body would take the process's request bodies in memory past `--body-memory-bytes`. */
export function bodiesBusy(inUseBytes: number, limitBytes: number): HttpError {
  return new HttpError(
    503,
    'service_busy',
    'Service busy',
    `Too many request bodies in memory (${formatSize(inUseBytes)} of ${formatSize(limitBytes)} held); please retry later.`,
    retryAfter(1),
  );
}

/**
 * This body would take its owner past its share of the bodies-in-memory budget (http/body-budget.ts):
 * a key's uploads in progress, the sandbox's, or one address's in the sandbox. remove.bg's 429, as for
 * a key at its concurrency cap: the client's own uploads hold the memory, and a 429 with Retry-After
 * is what its clients already wait and retry on (a 503 would say the service is down for everyone).
 */
export function bodyShareFull(share: 'key' | 'sandbox' | 'address', heldBytes: number, shareBytes: number): HttpError {
  const whose = {
    key: "This API key's uploads in progress",
    sandbox: 'Uploads to the sandbox in progress',
    address: 'Your uploads to the sandbox in progress',
  }[share];
  const hint = share === 'key' ? 'please retry when one has arrived' : 'please retry later, or use an API key';
  return new HttpError(
    429,
    'rate_limit_exceeded',
    'Rate limit exceeded',
    `${whose} hold ${formatSize(heldBytes)} of their ${formatSize(shareBytes)} share of the server's memory for request bodies; ${hint}.`,
    retryAfter(1),
  );
}

/** The process is near its memory limit (process/memory-pressure.ts): no new body is taken now. */
export function memoryBusy(rssBytes: number, limitBytes: number): HttpError {
  return new HttpError(
    503,
    'service_busy',
    'Service busy',
    `The server is near its memory limit (${formatSize(rssBytes)} of ${formatSize(limitBytes)} in use); please retry later.`,
    retryAfter(2),
  );
}

/** The body was still arriving when the request's deadline passed (a slow or stalled upload). */
export function requestTimeout(timeoutMs: number): HttpError {
  return new HttpError(408, 'request_timeout', 'Request timeout', `The request body did not arrive within ${formatSeconds(timeoutMs)}.`);
}

/** The body arrived slower than its minimum upload rate (a slow or stuck client; http/body-budget.ts minUploadRate, docs/http.md). */
export function uploadTooSlow(bytes: number, windowMs: number, minBytes: number): HttpError {
  return new HttpError(
    408,
    'request_timeout',
    'Request timeout',
    `The request body arrived too slowly: ${bytes} bytes in the last ${formatSeconds(windowMs)} (at least ${minBytes} are needed).`,
  );
}

/** The request's deadline passed while it waited or ran: its handler refunds what it held; retry later. */
export function deadlineExceeded(timeoutMs: number, retryAfterSeconds: number): HttpError {
  return new HttpError(
    503,
    'service_busy',
    'Service busy',
    `The request could not be completed within ${formatSeconds(timeoutMs)}; no credits were charged. Please retry later.`,
    retryAfter(retryAfterSeconds),
  );
}

export function notFound(path: string): HttpError {
  return new HttpError(404, 'not_found', 'Not found', `No route for ${path}`);
}

export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): HttpError {
  return new HttpError(405, 'method_not_allowed', 'Method not allowed', `${method} is not allowed on ${path}`, { Allow: allowed.join(', ') });
}

export function shuttingDown(): HttpError {
  return new HttpError(503, 'service_unavailable', 'Service unavailable', 'The server is shutting down.', retryAfter(1));
}

/** What a client sees for any unexpected failure: never a stack or internal message. */
export function internalError(): HttpError {
  return new HttpError(500, 'internal_error', 'Internal server error', 'An unexpected error occurred. Please retry.');
}
