// SSRF-safe download of image_url / bg_image_url (rembg's _validate_url + _resolve_public_ips):
// http(s) only; every address the name resolves to must be public; the checked address is
// PINNED for the connection (custom `lookup`, so DNS rebinding cannot swap it) while Host and
// SNI keep the original name; each redirect is re-checked (max 3); bytes and time are capped.

import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { blockedReason, isLoopback } from './address-rules.js';
import { FetchBusyError, LookupTimeoutError, processFetchGate, type FetchGate } from './fetch-gate.js';

export interface FetchImageOptions {
  /** Largest body accepted; the download is aborted as soon as it is exceeded. */
  maxBytes: number;
  /** Per hop, each: the DNS look-up (waiting for a look-up place included), then the TCP (+ TLS) handshake. */
  connectTimeoutMs: number;
  /** Whole download, redirects included. */
  totalTimeoutMs: number;
  maxRedirects: number;
  /**
   * Let loopback addresses through (never private/link-local ones): for tests and benches whose image
   * hosts listen on 127.0.0.1. No flag or env var sets it.
   */
  allowLoopback?: boolean;
  /** Extra CA certificates for https (tests with a self-signed server). */
  ca?: string | Buffer;
  /** Client disconnects abort the download too. */
  signal?: AbortSignal;
  /** Name resolution, injectable for tests. */
  resolve?: (hostname: string) => Promise<Array<{ address: string; family: number }>>;
  /** Per-process caps on downloads and DNS look-ups (fetch-gate.ts); tests inject their own. */
  gate?: FetchGate;
  /**
   * Counts bytes about to be held (the declared length, or the body as it grows) against the
   * request's input memory; throws to stop the download with that error.
   */
  hold?: (bytes: number) => void;
}

export { FetchBusyError } from './fetch-gate.js';

export const DEFAULT_FETCH_OPTIONS = Object.freeze({
  maxBytes: 22 * 1024 * 1024,
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 20_000,
  maxRedirects: 3,
});

export interface FetchedImage {
  data: Buffer;
  contentType: string | undefined;
  finalUrl: URL;
}

/** A download failure; `reason` completes "Failed to download image from given image_url: …". */
export class ImageFetchError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ImageFetchError';
  }
}

const defaultResolve = (hostname: string) => dnsLookup(hostname, { all: true, verbatim: true });

/** Resolve and vet a URL's host: the pinned address to connect to. */
async function vetHost(url: URL, opts: FetchImageOptions, gate: FetchGate, signal: AbortSignal): Promise<{ address: string; family: number }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ImageFetchError(`Unsupported URL scheme '${url.protocol.replace(':', '')}' (only http and https)`);
  }
  if (url.username || url.password) throw new ImageFetchError('URLs with credentials are not supported');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    const resolve = opts.resolve ?? defaultResolve;
    try {
      // getaddrinfo cannot be aborted: the gate bounds its time and how many hold libuv's threads.
      addresses = await gate.lookup(host, () => resolve(host), opts.connectTimeoutMs, signal);
    } catch (err) {
      if (err instanceof LookupTimeoutError) throw new ImageFetchError(err.reason);
      if (err instanceof FetchBusyError || signal.aborted) throw err;
      throw new ImageFetchError(`Could not resolve host '${host}'`);
    }
    if (addresses.length === 0) throw new ImageFetchError(`Could not resolve host '${host}'`);
  }
  // Every record must be public: a name with one private record is a rebinding tool.
  for (const { address } of addresses) {
    const reason = blockedReason(address);
    if (reason !== null && !(opts.allowLoopback && isLoopback(address))) {
      throw new ImageFetchError(`Refusing to connect to ${address} (${reason} address)`);
    }
  }
  return addresses[0]!;
}

/** A response whose body is still to be read, and what the request reported after it arrived. */
interface Exchange {
  res: http.IncomingMessage;
  /**
   * An error of the request after the response began: node's parser refusing the body (a bad chunk
   * size) is reported there, before the response's own 'aborted'/'error', which say only "aborted".
   */
  laterError: () => unknown;
}

/** One HTTP exchange against a pinned address. Resolves once the response's head is in. */
function requestOnce(url: URL, pinned: { address: string; family: number }, opts: FetchImageOptions, signal: AbortSignal): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const lookup: LookupFunction = (_hostname, options, cb) => {
      // Node may ask for all records (autoSelectFamily); answer with the checked one either way.
      if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: unknown[]) => void)(null, [pinned]);
      else cb(null, pinned.address, pinned.family);
    };
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      method: 'GET',
      lookup,
      signal,
      agent: false, // no pooled sockets: a reused connection would skip the pin
      headers: { 'User-Agent': 'cutout-image-fetch/1', Accept: 'image/*,*/*;q=0.5', 'Accept-Encoding': 'identity' },
      ...(opts.ca !== undefined && { ca: opts.ca }),
    });
    const connectTimer = setTimeout(() => {
      req.destroy(new ImageFetchError(`Connection timed out after ${opts.connectTimeoutMs} ms`));
    }, opts.connectTimeoutMs);
    req.on('socket', (socket) => {
      const event = url.protocol === 'https:' ? 'secureConnect' : 'connect';
      socket.once(event, () => clearTimeout(connectTimer));
    });
    let laterError: unknown;
    req.on('response', (res) => {
      clearTimeout(connectTimer);
      resolve({ res, laterError: () => laterError });
    });
    req.on('error', (err) => {
      clearTimeout(connectTimer);
      laterError ??= err;
      reject(err);
    });
    req.end();
  });
}

/** The request's input memory could not hold the download: `refusal` (what hold threw) goes out as is. */
class HoldRefused extends Error {
  constructor(readonly refusal: unknown) {
    super('the download could not be held in memory');
  }
}

function readCapped({ res, laterError }: Exchange, maxBytes: number, signal: AbortSignal, hold?: (bytes: number) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    /** True for the first outcome only: destroying the stream fires 'aborted'/'error' after our own verdict. */
    const settle = () => {
      if (settled) return false;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      return true;
    };
    const fail = (err: unknown) => {
      if (!settle()) return;
      res.destroy();
      reject(err);
    };
    // A body without Content-Length ends where the connection does: when the timeout or the client's
    // abort destroys the socket, node completes the message and 'end' would hand on the bytes so far.
    const onAbort = () => fail(signal.reason);
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    const tooLarge = () => new ImageFetchError(`File exceeds limit of ${Math.round(maxBytes / 1048576)}MB`);
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      fail(tooLarge());
      return;
    }
    let held = 0;
    /** False (and the download failed) when `bytes` in all cannot be held. */
    const holding = (bytes: number): boolean => {
      if (!hold || bytes <= held) return true;
      try {
        hold(bytes - held);
      } catch (err) {
        fail(new HoldRefused(err));
        return false;
      }
      held = bytes;
      return true;
    };
    // The declared length at once (a download that cannot fit stops before its body); else as it grows.
    if (Number.isFinite(declared) && declared > 0 && !holding(declared)) return;
    const chunks: Buffer[] = [];
    let total = 0;
    res.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) fail(tooLarge());
      else if (holding(total)) chunks.push(chunk);
    });
    const cut = () => laterError() ?? new ImageFetchError('Connection closed before the body was complete');
    res.on('error', (err) => fail(laterError() ?? err));
    res.on('aborted', () => fail(cut()));
    res.on('end', () => {
      if (!res.complete) {
        fail(cut());
        return;
      }
      if (!settle()) return;
      // One copy into an unpooled buffer the pool can take by transfer.
      const out = Buffer.allocUnsafeSlow(total);
      let offset = 0;
      for (const c of chunks) offset += c.copy(out, offset);
      resolve(out);
    });
  });
}

function describeNetworkError(err: unknown, opts: FetchImageOptions): ImageFetchError {
  if (err instanceof ImageFetchError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e?.name === 'AbortError' || e?.code === 'ABORT_ERR') {
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof ImageFetchError) return cause;
    return new ImageFetchError(`Timed out after ${opts.totalTimeoutMs} ms`);
  }
  switch (e?.code) {
    case 'ECONNREFUSED':
      return new ImageFetchError('Connection refused');
    case 'ECONNRESET':
      return new ImageFetchError('Connection reset by the remote server');
    case 'ETIMEDOUT':
      return new ImageFetchError('Connection timed out');
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_STATUS':
      return new ImageFetchError('The remote server sent an invalid HTTP response');
    case 'HPE_HEADER_OVERFLOW':
      return new ImageFetchError("The remote server's response headers exceed 16 kB");
    default:
      // The rest of node's parser refusals (bad header bytes, conflicting lengths, …), code kept for the curious.
      if (e?.code?.startsWith('HPE_')) return new ImageFetchError(`The remote server sent an invalid HTTP response (${e.code})`);
      if (e?.code?.startsWith('ERR_TLS') || e?.code?.includes('CERT') || e?.code === 'EPROTO') {
        return new ImageFetchError(`TLS error (${e.code})`);
      }
      return new ImageFetchError(`Network error${e?.code ? ` (${e.code})` : ''}`);
  }
}

/**
 * Download an image. Rejects with ImageFetchError, with FetchBusyError when the process already runs
 * as many downloads or look-ups as it allows, or (client gone, deadline) with the signal's reason.
 */
export async function fetchImage(url: URL, options: Partial<FetchImageOptions> = {}): Promise<FetchedImage> {
  const opts: FetchImageOptions = { ...DEFAULT_FETCH_OPTIONS, ...options };
  const gate = opts.gate ?? processFetchGate();
  const leave = gate.enter();
  try {
    return await fetchWithin(url, opts, gate);
  } finally {
    leave();
  }
}

async function fetchWithin(url: URL, opts: FetchImageOptions, gate: FetchGate): Promise<FetchedImage> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new ImageFetchError(`Timed out after ${opts.totalTimeoutMs} ms`)), opts.totalTimeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout.signal]) : timeout.signal;
  try {
    let current = url;
    for (let hop = 0; ; hop++) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const pinned = await vetHost(current, opts, gate, signal);
      let exchange: Exchange;
      try {
        exchange = await requestOnce(current, pinned, opts, signal);
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (timeout.signal.aborted) throw timeout.signal.reason;
        throw describeNetworkError(err, opts);
      }
      const { res } = exchange;
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.destroy();
        if (hop >= opts.maxRedirects) throw new ImageFetchError(`Too many redirects (more than ${opts.maxRedirects})`);
        try {
          current = new URL(res.headers.location, current);
        } catch {
          throw new ImageFetchError('Invalid redirect location');
        }
        continue;
      }
      if (status < 200 || status >= 300) {
        res.destroy();
        throw new ImageFetchError(`HTTP Status ${status}`);
      }
      try {
        const data = await readCapped(exchange, opts.maxBytes, signal, opts.hold);
        return { data, contentType: res.headers['content-type'], finalUrl: current };
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (timeout.signal.aborted) throw timeout.signal.reason;
        if (err instanceof HoldRefused) throw err.refusal;
        throw describeNetworkError(err, opts);
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
