// How many fields a request body may hold, and how deep a JSON body may nest, checked on the raw bytes
// as they arrive, before forms.ts parses anything. Parsing runs on the main thread, and its cost grows
// with the number of fields (a 12 MB JSON body of a million keys held every other request up for
// seconds); remove.bg's own requests have about 30 fields, fewer than 60 with every per-class
// `shadow_type[class]` form. Each counter is a scan that builds nothing, resumes where it stopped as
// more of the body comes in, and throws at the limit: a body over it is refused before the rest of it
// is even read (http/context.ts: readFields). Pure.

import { parseContentType } from './content-type.js';
import { invalidBody, tooManyFields } from './http-error.js';

/** Multipart parts, urlencoded pairs, or JSON keys and array elements (all levels together). */
export const MAX_FIELDS = 1000;

/** Objects and arrays inside one another; the body's own object is level 1. remove.bg's deepest is 2. */
export const MAX_JSON_DEPTH = 32;

/** Counts a body's fields as it arrives. */
export interface FieldCounter {
  /**
   * `received`: the body so far, from its first byte (each call the same body, at least as much of it
   * as the call before; the last call all of it). Throws the 400 once the body is over a limit.
   */
  scan(received: Buffer): void;
}

/**
 * The counter for a body of this Content-Type, or undefined where forms.ts refuses the body without
 * parsing it (an unsupported type, a multipart type without a usable boundary).
 */
export function fieldCounter(contentTypeHeader: string | undefined): FieldCounter | undefined {
  const { essence, params } = parseContentType(contentTypeHeader);
  if (essence === 'multipart/form-data') {
    const boundary = params.get('boundary');
    return boundary && boundary.length <= 70 ? new MultipartCounter(boundary) : undefined;
  }
  if (essence === 'application/json' || essence.endsWith('+json')) return new JsonCounter();
  if (essence === 'application/x-www-form-urlencoded') return new UrlencodedCounter();
  return undefined;
}

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

/**
 * Multipart parts, counted as multipart-framing.ts frames them: the boundary lines before the closing
 * one (a preamble and an epilogue are not looked into; part data never holds CRLF + `--boundary`).
 * A body the framing refuses is left to it.
 */
class MultipartCounter implements FieldCounter {
  private readonly dashBoundary: Buffer;
  private readonly delimiter: Buffer;
  private parts = 0;
  private started = false;
  private done = false;
  /** Where the boundary line to decide on begins (its `--`), or -1 while the next is not found. */
  private at = -1;
  /** Where the search for the next delimiter resumes. */
  private searchFrom = 0;

  constructor(boundary: string) {
    this.dashBoundary = Buffer.from(`--${boundary}`, 'latin1');
    this.delimiter = Buffer.concat([Buffer.from([CR, LF]), this.dashBoundary]);
  }

  scan(buf: Buffer): void {
    const length = this.dashBoundary.length;
    while (!this.done) {
      if (!this.started) {
        if (buf.length < length) return;
        this.started = true;
        if (buf.subarray(0, length).equals(this.dashBoundary)) this.at = 0;
      }
      if (this.at < 0) {
        const found = buf.indexOf(this.delimiter, this.searchFrom);
        if (found < 0) {
          // A delimiter may begin in the last bytes and end in what comes next.
          this.searchFrom = Math.max(this.searchFrom, buf.length - this.delimiter.length + 1);
          return;
        }
        this.at = found + 2;
      }
      const after = this.at + length;
      if (buf.length < after + 2) return; // closing or not: the next two bytes say
      if (buf[after] === DASH && buf[after + 1] === DASH) {
        this.done = true; // the closing boundary
        return;
      }
      if (++this.parts > MAX_FIELDS) throw tooManyFields(MAX_FIELDS, 'multipart parts');
      this.searchFrom = after;
      this.at = -1;
    }
  }
}

/**
 * Urlencoded pairs, counted as `&`-separated segments. Empty ones count too: URLSearchParams skips
 * them, but a client that sends them is no remove.bg client, and counting every `&` keeps the scan to
 * MAX_FIELDS searches whatever the body holds.
 */
class UrlencodedCounter implements FieldCounter {
  private pairs = 1;
  private searchFrom = 0;

  scan(buf: Buffer): void {
    for (let at = buf.indexOf(AMP, this.searchFrom); at >= 0; at = buf.indexOf(AMP, at + 1)) {
      if (++this.pairs > MAX_FIELDS) throw tooManyFields(MAX_FIELDS, 'form fields');
    }
    this.searchFrom = buf.length;
  }
}

/**
 * JSON keys and array elements at every level (too_many_fields over MAX_FIELDS), and nesting
 * (invalid_request_body over MAX_JSON_DEPTH). What is inside strings does not count. It reads the
 * bytes (UTF-8 multi-byte sequences never hold JSON's punctuation) and validates nothing: at the first
 * sign the body is not JSON it stops and leaves the body to JSON.parse, which says where.
 */
class JsonCounter implements FieldCounter {
  private i = 0;
  private depth = 0;
  private entries = 0;
  /** What opened each level (1..depth): arrays count their elements, objects their keys (at ':'). */
  private readonly opener = new Uint8Array(MAX_JSON_DEPTH + 1);
  /** The last byte outside strings and whitespace; 0 before the first. */
  private prev = 0;
  private stopped = false;
  /** Inside a string that opened here, or -1. */
  private open = -1;
  /** Inside that string, with an escape seen: walking it byte by byte from `walk`. */
  private walk = -1;
  /** The walk's next byte is escaped. */
  private escaped = false;

  scan(buf: Buffer): void {
    const n = buf.length;
    while (!this.stopped && this.i < n) {
      if (this.open >= 0) {
        const end = this.stringEnd(buf);
        if (end < 0) return; // the rest of the string is still coming
        this.open = -1;
        this.prev = QUOTE;
        this.i = end + 1;
        continue;
      }
      const c = buf[this.i]!;
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) this.take(c);
      this.i++;
    }
  }

  /** One byte outside strings and whitespace, at `this.i`. */
  private take(c: number): void {
    // A value right after '[' is the array's first element; the others follow a ','.
    if ((this.prev === OPEN_ARRAY && c !== CLOSE_ARRAY) || c === COLON || (c === COMMA && this.opener[this.depth] === OPEN_ARRAY)) {
      if (++this.entries > MAX_FIELDS) throw tooManyFields(MAX_FIELDS, 'JSON keys and array elements');
    }
    switch (c) {
      case QUOTE: {
        // A string where JSON allows one starts a key or a value, each counted, so the strings to
        // search are as bounded as the fields; anywhere else the body is not JSON.
        const prev = this.prev;
        if (prev !== 0 && prev !== OPEN_OBJECT && prev !== OPEN_ARRAY && prev !== COMMA && prev !== COLON) this.stopped = true;
        this.open = this.i;
        this.walk = -1;
        return; // prev is set when the string closes
      }
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (++this.depth > MAX_JSON_DEPTH) throw invalidBody(`The JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`);
        this.opener[this.depth] = c;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (this.depth === 0) this.stopped = true;
        else this.depth--;
        break;
    }
    this.prev = c;
  }

  /** Where the open string closes, or -1 when its closing quote has not arrived yet. */
  private stringEnd(buf: Buffer): number {
    if (this.walk < 0) {
      // The usual case, one search: a quote with no backslash before it closes the string.
      const quote = buf.indexOf(QUOTE, Math.max(this.i, this.open + 1));
      if (quote < 0) {
        this.i = buf.length;
        return -1;
      }
      if (buf[quote - 1] !== BACKSLASH) return quote;
      // An escape: walk the string from its start, each backslash taking the byte after it.
      this.walk = this.open + 1;
      this.escaped = false;
    }
    for (let i = this.walk; i < buf.length; i++) {
      if (this.escaped) this.escaped = false;
      else if (buf[i] === BACKSLASH) this.escaped = true;
      else if (buf[i] === QUOTE) return i;
    }
    this.walk = buf.length;
    this.i = buf.length;
    return -1;
  }
}
