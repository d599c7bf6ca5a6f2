// ApiError and its factories: every client-visible failure, in remove.bg's {errors:[{title,code,detail}]} envelope.
// Pure: no I/O, no uWS. Titles and codes follow REMOVEBG-API.md §3.

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** Extra response headers (Retry-After on 429/503). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: string, title: string, detail?: string, headers: Record<string, string> = {}) {
    super(detail ? `${title}: ${detail}` : title);
    this.name = 'ApiError';
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
  400: '400 Bad Request',
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

/** The same error with more response headers (rate-limit headers on a 429). */
export function withHeaders(err: ApiError, headers: Record<string, string>): ApiError {
  return new ApiError(err.status, err.code, err.title, err.detail, { ...headers, ...err.headers });
}

// ---- 400: parameters --------------------------------------------------------------------------

/** remove.bg's per-parameter code: invalid_<name>, title "Invalid value for parameter '<name>'". */
export function invalidParameter(name: string, expected: string, received: unknown): ApiError {
  return new ApiError(
    400,
    `invalid_${name}`,
    `Invalid value for parameter '${name}'`,
    `Expected ${expected} for ${name} but received ${describe(received)}`,
  );
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 80 ? `${value.slice(0, 80)}…` : value}'`;
  if (value === null) return 'null';
  if (typeof value === 'object') return `a value of type ${Array.isArray(value) ? 'array' : 'object'}`;
  return `${String(value)} of type ${typeof value}`;
}

export function missingSource(): ApiError {
  return new ApiError(
    400,
    'missing_source',
    'No image given',
    'Please provide the source image in the image_url, image_file or image_file_b64 parameter.',
  );
}

export function multipleSources(given: readonly string[]): ApiError {
  return new ApiError(
    400,
    'multiple_sources',
    'Multiple image sources given',
    `Please provide only one of image_url, image_file or image_file_b64 (received ${given.join(', ')}).`,
  );
}

export function multipleBgSources(given: readonly string[]): ApiError {
  return new ApiError(
    400,
    'multiple_bg_sources',
    'Multiple background sources given',
    `Please provide only one of bg_color, bg_image_url or bg_image_file (received ${given.join(', ')}).`,
  );
}

export function invalidFileType(received: string, field = 'image'): ApiError {
  const detail =
    field === 'image' ? `Expected jpg/png/webp, received ${received}` : `Expected jpg/png/webp for ${field}, received ${received}`;
  return new ApiError(400, 'invalid_file_type', 'Invalid file type', detail);
}

export function failedToReadImage(detail = 'The image could not be decoded.'): ApiError {
  return new ApiError(400, 'failed_to_read_image', 'Failed to read image', detail);
}

export function resolutionTooHigh(detail: string): ApiError {
  return new ApiError(400, 'resolution_too_high', 'Resolution too high', detail);
}

// The recorded remove.bg response carries the reason in the title itself (clients print errors[0].title).
export function failedImageDownload(reason: string): ApiError {
  const message = `Failed to download image from given image_url: ${reason}`;
  return new ApiError(400, 'failed_image_download', message, message);
}

export function failedBgDownload(reason: string): ApiError {
  const message = `Failed to download background image from given bg_image_url: ${reason}`;
  return new ApiError(400, 'failed_bg_download', message, message);
}

export function invalidImageUrl(field: 'image_url' | 'bg_image_url', reason: string): ApiError {
  const code = field === 'image_url' ? 'invalid_image_url' : 'invalid_bg_image_url';
  return new ApiError(400, code, `Invalid value for parameter '${field}'`, reason);
}

/** The body could not be parsed at all (bad JSON, broken multipart, unknown content type). */
export function invalidBody(detail: string): ApiError {
  return new ApiError(400, 'invalid_request_body', 'Invalid request body', detail);
}

// ---- 402 / 403 / 413 / 429 ---------------------------------------------------------------------

export function authFailed(): ApiError {
  return new ApiError(403, 'auth_failed', 'API Key invalid', 'The API key given in the X-Api-Key header is not valid.');
}

export function missingApiKey(): ApiError {
  return new ApiError(403, 'auth_failed', 'Missing API Key', 'Please provide your API key in the X-Api-Key header.');
}

export function insufficientCredits(): ApiError {
  return new ApiError(
    402,
    'insufficient_credits',
    'Insufficient credits',
    'Your account does not have enough credits for this request.',
  );
}

export function fileTooLarge(limitBytes: number, what = 'File'): ApiError {
  return new ApiError(413, 'file_too_large', 'File too large', `${what} exceeds limit of ${formatMegabytes(limitBytes)}`);
}

/** The account's improve uploads would pass its storage quota (nothing was stored). */
export function storageQuotaExceeded(usedBytes: number, quotaBytes: number, neededBytes: number): ApiError {
  return new ApiError(
    413,
    'storage_quota_exceeded',
    'Storage quota exceeded',
    `Improve uploads of this account use ${formatSize(usedBytes)} of its ${formatSize(quotaBytes)} quota; this one needs ${formatSize(neededBytes)}.`,
  );
}

export function rateLimitExceeded(retryAfterSeconds: number, detail = 'Too many requests, please slow down.'): ApiError {
  const retry = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  return new ApiError(429, 'rate_limit_exceeded', 'Rate limit exceeded', detail, { 'Retry-After': retry });
}

export function concurrencyLimitExceeded(retryAfterSeconds = 1): ApiError {
  return rateLimitExceeded(retryAfterSeconds, 'Too many concurrent requests for this API key.');
}

// ---- 404 / 405 / 5xx ---------------------------------------------------------------------------

export function notFound(path: string): ApiError {
  return new ApiError(404, 'not_found', 'Not found', `No route for ${path}`);
}

export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): ApiError {
  return new ApiError(405, 'method_not_allowed', 'Method not allowed', `${method} is not allowed on ${path}`, {
    Allow: allowed.join(', '),
  });
}

export function serviceBusy(retryAfterSeconds: number, detail = 'The removal queue is full, please retry later.'): ApiError {
  return new ApiError(
    503,
    'service_busy',
    'Service busy',
    detail,
    { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  );
}

/** The body was still arriving when the request's deadline passed (a slow or stalled upload). */
export function requestTimeout(timeoutMs: number): ApiError {
  return new ApiError(
    408,
    'request_timeout',
    'Request timeout',
    `The request body did not arrive within ${formatSeconds(timeoutMs)}.`,
  );
}

/** The request's deadline passed while it waited or ran: credits were refunded, retry later. */
export function deadlineExceeded(timeoutMs: number, retryAfterSeconds: number): ApiError {
  return new ApiError(
    503,
    'service_busy',
    'Service busy',
    `The request could not be completed within ${formatSeconds(timeoutMs)}; no credits were charged. Please retry later.`,
    { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  );
}

const formatSeconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`;

export function shuttingDown(): ApiError {
  return new ApiError(503, 'service_unavailable', 'Service unavailable', 'The server is shutting down.', {
    'Retry-After': '1',
  });
}

/** What a client sees for any unexpected failure: never a stack or internal message. */
export function internalError(): ApiError {
  return new ApiError(500, 'internal_error', 'Internal server error', 'An unexpected error occurred. Please retry.');
}

/** Worker failure codes (pool/task.ts RemoveErrorCode) → client error. */
export function fromRemoveFailure(code: string, message: string): ApiError {
  switch (code) {
    case 'failed_to_read_image':
      return failedToReadImage(message);
    case 'invalid_file_type':
      return new ApiError(400, 'invalid_file_type', 'Invalid file type', message);
    case 'resolution_too_high':
      return resolutionTooHigh(message);
    case 'file_too_large':
      return new ApiError(413, 'file_too_large', 'File too large', message);
    case 'failed_bg_image':
      return new ApiError(400, 'failed_bg_download', 'Failed to read background image', message);
    case 'roi_exceeds_bounds':
      return new ApiError(400, 'roi_exceeds_bounds', 'ROI exceeds image bounds', message);
    case 'roi_region_empty':
      return new ApiError(400, 'roi_region_empty', 'ROI region is empty', message);
    default:
      return internalError();
  }
}
