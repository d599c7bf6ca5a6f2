// How many fields a request body may hold, and how deep a JSON body may nest: checked on the raw bytes
// before forms.ts parses them. Parsing runs on the main thread, and its cost grows with the number of
// fields (a 12 MB JSON body of a million keys held every other request up for seconds); remove.bg's
// own requests have about 30 fields, fewer than 60 with every per-class `shadow_type[class]` form.
// Each check is a scan that builds nothing and stops at the limit, so a refused body costs little more
// than the limit's worth of fields. Pure.

import { invalidBody, tooManyFields } from './http-error.js';

/** Multipart parts, urlencoded pairs, or JSON keys and array elements (all levels together). */
export const MAX_FIELDS = 1000;

/** Objects and arrays inside one another; the body's own object is level 1. remove.bg's deepest is 2. */
export const MAX_JSON_DEPTH = 32;

const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
const DASH = 0x2d;
const AMP = 0x26;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const asBuffer = (body: Uint8Array): Buffer => Buffer.from(body.buffer, body.byteOffset, body.byteLength);

/**
 * Throws 400 too_many_fields when a multipart body has more than MAX_FIELDS parts, counted as
 * multipart-framing.ts frames them: the boundary lines before the closing one (a preamble and an
 * epilogue are not looked into). A body the framing refuses is left to it.
 */
export function checkMultipartFields(body: Uint8Array, boundary: string): void {
  const buf = asBuffer(body);
  const dashBoundary = Buffer.from(`--${boundary}`, 'latin1');
  const delimiter = Buffer.concat([Buffer.from([CR, LF]), dashBoundary]);
  let pos = 0;
  if (!buf.subarray(0, dashBoundary.length).equals(dashBoundary)) {
    const first = buf.indexOf(delimiter);
    if (first < 0) return;
    pos = first + 2; // after a preamble
  }
  for (let parts = 0; ; ) {
    const after = pos + dashBoundary.length;
    if (buf[after] === DASH && buf[after + 1] === DASH) return; // the closing boundary
    if (++parts > MAX_FIELDS) throw tooManyFields(MAX_FIELDS, 'multipart parts');
    const next = buf.indexOf(delimiter, after);
    if (next < 0) return;
    pos = next + 2;
  }
}

/**
 * Throws 400 too_many_fields when an urlencoded body has more than MAX_FIELDS `&`-separated pairs.
 * Empty ones count too: URLSearchParams skips them, but a client that sends them is no remove.bg client,
 * and counting every `&` keeps the scan to MAX_FIELDS searches whatever the body holds.
 */
export function checkUrlencodedFields(body: Uint8Array): void {
  const buf = asBuffer(body);
  let pairs = 1;
  for (let at = buf.indexOf(AMP); at >= 0; at = buf.indexOf(AMP, at + 1)) {
    if (++pairs > MAX_FIELDS) throw tooManyFields(MAX_FIELDS, 'form fields');
  }
}

/**
 * Throws 400 too_many_fields when a JSON body has more than MAX_FIELDS keys and array elements (at
 * every level), and 400 invalid_request_body when it nests deeper than MAX_JSON_DEPTH. What is inside
 * strings does not count. It scans the bytes (UTF-8 continuation bytes never look like JSON's
 * punctuation) and validates nothing: at the first sign the body is not JSON it stops and leaves the
 * body to JSON.parse, which says where.
 */
export function checkJsonFields(body: Uint8Array): void {
  const buf = asBuffer(body);
  const n = buf.length;
  let depth = 0;
  let entries = 0;
  /** What opened each level (1..depth): arrays count their elements, objects their keys (at ':'). */
  const opener = new Uint8Array(MAX_JSON_DEPTH + 1);
  /** The last byte outside strings and whitespace; 0 before the first. */
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const c = buf[i]!;
    if (c === SPACE || c === LF || c === CR || c === TAB) continue;
    // A value right after '[' is the array's first element; the others follow a ','.
    if ((prev === OPEN_ARRAY && c !== CLOSE_ARRAY) || c === COLON || (c === COMMA && opener[depth] === OPEN_ARRAY)) {
      if (++entries > MAX_FIELDS) throw tooManyFields(MAX_FIELDS, 'JSON keys and array elements');
    }
    switch (c) {
      case QUOTE:
        // A string where JSON allows one starts a key or a value, each counted, so scanning strings
        // costs at most the limit's worth of searches; anywhere else the body is not JSON.
        if (prev !== 0 && prev !== OPEN_OBJECT && prev !== OPEN_ARRAY && prev !== COMMA && prev !== COLON) return;
        i = stringEnd(buf, i);
        if (i < 0) return;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (++depth > MAX_JSON_DEPTH) throw invalidBody(`The JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`);
        opener[depth] = c;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (depth === 0) return;
        depth--;
        break;
    }
    prev = c;
  }
}

/** Where the string opened at `open` closes, or -1 when it never does. */
function stringEnd(buf: Buffer, open: number): number {
  const quote = buf.indexOf(QUOTE, open + 1);
  if (quote < 0 || buf[quote - 1] !== BACKSLASH) return quote; // no escape before it: the usual case, one search
  // An escape before that quote: walk the string byte by byte, each backslash taking the byte after it.
  for (let i = open + 1; i < buf.length; i++) {
    const c = buf[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return -1;
}
