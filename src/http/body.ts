// Bounded, abort-safe request body reader for uWS, and the one home of the body limit
// (`--max-body-bytes`): the declared Content-Length is checked before anything is held or read
// (declaredLengthError) and one unpooled buffer of that size is preallocated; every chunk is copied
// (uWS neuters it on return) and the running total is checked on every chunk, so chunked or lying
// clients hit the same limit.

import { bodyTooLarge, invalidBody, type HttpError } from './http-error.js';
import { exclusiveBuffer } from '../image/owned-bytes.js';

/** The slice of uWS HttpResponse the reader needs (a fake implements it in unit tests). */
export interface BodySource {
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): unknown;
}

export interface ReadBodyOptions {
  /** Parsed Content-Length, or null when absent (chunked). */
  declaredLength: number | null;
  /** Largest body accepted, in bytes. */
  limit: number;
  /** Fires when the client disconnects; the promise then rejects with an AbortError. */
  signal: AbortSignal;
  /** Initial capacity without Content-Length. */
  initialCapacity?: number;
  /**
   * Called with the body so far after each chunk (the last call with all of it); what it throws
   * rejects the read at once, and the rest of the body is not taken (http/field-limits.ts).
   */
  inspect?: (received: Buffer) => void;
}

/** Content-Length as a number, null when absent; NaN for garbage (caller answers 400). */
export function parseContentLength(header: string | undefined): number | null {
  if (header === undefined || header === '') return null;
  return /^\d{1,15}$/.test(header.trim()) ? Number(header.trim()) : NaN;
}

/**
 * The body limit on the declared Content-Length: a 400 for a length that is not a number, a 413 for
 * one over `limit`, or null (no Content-Length, or one that fits). The context calls it before it
 * takes any memory (and a handler before it holds a slot); readBody before it preallocates.
 */
export function declaredLengthError(declaredLength: number | null, limit: number): HttpError | null {
  if (declaredLength === null) return null;
  if (!Number.isSafeInteger(declaredLength)) return invalidBody('Invalid Content-Length header.');
  if (declaredLength > limit) return bodyTooLarge(limit);
  return null;
}

export function abortError(): Error {
  const err = new Error('The client closed the connection');
  err.name = 'AbortError';
  (err as Error & { code: string }).code = 'aborted';
  return err;
}

/**
 * Resolve with the whole body, in an exclusive ArrayBuffer (image/owned-bytes.ts): with a
 * Content-Length the result spans it exactly; without one it may be a view on a larger one.
 */
export function readBody(src: BodySource, opts: ReadBodyOptions): Promise<Buffer> {
  const { declaredLength, limit, signal } = opts;
  const refused = declaredLengthError(declaredLength, limit);
  if (refused) return Promise.reject(refused);
  if (signal.aborted) return Promise.reject(signal.reason ?? abortError());

  return new Promise<Buffer>((resolve, reject) => {
    // Exclusive (image/owned-bytes.ts): an upload's image goes to its worker as a view on this buffer.
    let buf = exclusiveBuffer(declaredLength ?? Math.min(limit, opts.initialCapacity ?? 64 * 1024));
    let length = 0;
    let settled = false;
    const finish = (err: unknown, value?: Buffer) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(value!);
    };
    // The signal's reason: the client left (AbortError) or the deadline passed (its ApiError).
    const onAbort = () => finish(signal.reason ?? abortError());
    signal.addEventListener('abort', onAbort, { once: true });

    src.onData((chunk, isLast) => {
      if (settled) return; // over the limit or aborted: drop the rest
      try {
        const n = chunk.byteLength;
        if (length + n > limit || (declaredLength !== null && length + n > declaredLength)) {
          finish(bodyTooLarge(limit));
          return;
        }
        if (length + n > buf.byteLength) {
          // Only without Content-Length: grow geometrically (amortised O(n), never concat per chunk).
          const grown = exclusiveBuffer(Math.min(limit, Math.max(buf.byteLength * 2, length + n)));
          buf.copy(grown, 0, 0, length);
          buf = grown;
        }
        buf.set(new Uint8Array(chunk), length); // copy now: uWS neuters the chunk on return
        length += n;
        opts.inspect?.(buf.subarray(0, length));
        if (isLast) finish(null, length === buf.byteLength ? buf : buf.subarray(0, length));
      } catch (err) {
        finish(err);
      }
    });
  });
}
