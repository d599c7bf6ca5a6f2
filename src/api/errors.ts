// ApiError and its factories: the failures remove.bg's rules give, in its {errors:[{title,code,detail}]}
// envelope (HttpError, http/http-error.ts, which also holds the transport's own failures).
// Pure: no I/O, no uWS. Titles and codes follow REMOVEBG-API.md §3.

import { formatMegabytes, formatSize, HttpError, internalError } from '../http/http-error.js';

/** An HttpError raised by a remove.bg rule (a parameter, a source, credits, limits, a worker failure). */
export class ApiError extends HttpError {
  constructor(status: number, code: string, title: string, detail?: string, headers: Record<string, string> = {}) {
    super(status, code, title, detail, headers);
    this.name = 'ApiError';
  }
}

/** The same error with more response headers (rate-limit headers on a 429). */
export function withHeaders(err: ApiError, headers: Record<string, string>): ApiError {
  return new ApiError(err.status, err.code, err.title, err.detail, { ...headers, ...err.headers });
}

// ---- 400: parameters --------------------------------------------------------------------------

/** remove.bg's per-parameter code: invalid_<name>, title "Invalid value for parameter '<name>'". */
export function invalidParameter(name: string, expected: string, received: unknown): ApiError {
  return new ApiError(400, `invalid_${name}`, `Invalid value for parameter '${name}'`, `Expected ${expected} for ${name} but received ${describe(received)}`);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 80 ? `${value.slice(0, 80)}…` : value}'`;
  if (value === null) return 'null';
  if (typeof value === 'object') return `a value of type ${Array.isArray(value) ? 'array' : 'object'}`;
  return `${String(value)} of type ${typeof value}`;
}

export function missingSource(): ApiError {
  return new ApiError(400, 'missing_source', 'No image given', 'Please provide the source image in the image_url, image_file or image_file_b64 parameter.');
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
  const detail = field === 'image' ? `Expected jpg/png/webp, received ${received}` : `Expected jpg/png/webp for ${field}, received ${received}`;
  return new ApiError(400, 'invalid_file_type', 'Invalid file type', detail);
}

/**
 * A file upload of 0 bytes: invalid_file_type, as remove.bg answers bytes that are no jpg/png/webp
 * before any decode (an empty file has no type at all; failed_to_read_image is for a file of an
 * accepted type that does not decode), with a detail that says the file is empty.
 */
export function emptyFile(field: 'image_file' | 'bg_image_file', filename: string): ApiError {
  const name = filename.length > 100 ? `${filename.slice(0, 99)}…` : filename;
  return invalidFileType(`an empty file ('${name}' has 0 bytes; was it saved or copied completely?)`, field === 'image_file' ? 'image' : field);
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

// ---- 402 / 403 / 413 / 429 ---------------------------------------------------------------------

export function authFailed(): ApiError {
  return new ApiError(403, 'auth_failed', 'API Key invalid', 'The API key given in the X-Api-Key header is not valid.');
}

export function missingApiKey(): ApiError {
  return new ApiError(403, 'auth_failed', 'Missing API Key', 'Please provide your API key in the X-Api-Key header.');
}

export function insufficientCredits(): ApiError {
  return new ApiError(402, 'insufficient_credits', 'Insufficient credits', 'Your account does not have enough credits for this request.');
}

/** An image (upload or base64) over the image limit. The request body's own limit is http's (bodyTooLarge). */
export function fileTooLarge(limitBytes: number): ApiError {
  return new ApiError(413, 'file_too_large', 'File too large', `File exceeds limit of ${formatMegabytes(limitBytes)}`);
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

// ---- 503 -------------------------------------------------------------------------------------

export function serviceBusy(retryAfterSeconds: number, detail = 'The removal queue is full, please retry later.'): ApiError {
  return new ApiError(503, 'service_busy', 'Service busy', detail, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
}

/** Worker failure codes (pool/protocol.ts RemoveErrorCode) → client error; an unknown one is a generic 500. */
export function fromRemoveFailure(code: string, message: string): HttpError {
  switch (code) {
    case 'failed_to_read_image':
      return failedToReadImage(message);
    case 'invalid_file_type':
      return new ApiError(400, 'invalid_file_type', 'Invalid file type', message);
    case 'resolution_too_high':
      return resolutionTooHigh(message);
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

// ---- 503: the ledger ----------------------------------------------------------------------------

/** Seconds a client is told to wait when the ledger is unavailable (the recovery probe runs every second). */
export const LEDGER_RETRY_AFTER_S = 5;

/** The ledger's database cannot be reached or did not answer within the bounded wait; nothing was charged. */
export function ledgerUnavailable(): ApiError {
  return new ApiError(503, 'ledger_unavailable', 'Service unavailable', 'The account ledger is unavailable; no credits were charged. Please retry later.', {
    'Retry-After': String(LEDGER_RETRY_AFTER_S),
  });
}
