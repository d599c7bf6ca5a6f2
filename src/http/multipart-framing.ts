// Strict framing check of a multipart/form-data body (RFC 2046 §5.1.1, RFC 7578), and the one reader
// of its parts: forms.ts takes each part's name, filename, Content-Type and data range from here.
// uWS.getParts, which this replaced, is lenient: it drops a last part whose closing boundary never
// came, takes a part without Content-Disposition, reads a header line without a colon as part of the
// data, reads `Content-Disposition` otherwise (parameter names case-sensitive, the last of a repeated
// one, backslashes kept, nothing for a parameter it cannot parse), and hands out data that does not
// keep the body alive. A body that is not exactly well framed is refused, so what we act on is what
// the client sent. Pure.

import { parseParameterized } from './content-type.js';

export class MultipartFramingError extends Error {
  constructor(detail: string) {
    super(`Malformed multipart/form-data body: ${detail}`);
    this.name = 'MultipartFramingError';
  }
}

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;
const CRLF = Buffer.from('\r\n');
const CRLFCRLF = Buffer.from('\r\n\r\n');
/** RFC 9110 field-name (token) ':' OWS value OWS; the value may hold any byte but controls (HTAB aside). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is about control bytes.
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*$/;

/** What a part's Content-Disposition says. */
export interface PartHead {
  name: string;
  filename?: string;
  /** The part's Content-Type, as sent. */
  type?: string;
}

/** A part as framed: its head, and where its data lies in the body (`dataStart` to `dataEnd`, exclusive). */
export interface FramedPart extends PartHead {
  dataStart: number;
  dataEnd: number;
}

/**
 * Throws MultipartFramingError unless `body` is: an optional preamble, one or more parts each opened by
 * `--boundary` CRLF with a header block (well-formed lines, exactly one `Content-Disposition: form-data`
 * with a non-empty name and no parameter given twice, at most one Content-Type) ended by an empty line,
 * and the closing `--boundary--`. Returns the parts' names, filenames and data ranges, in order.
 */
export function checkMultipartFraming(body: Uint8Array, boundary: string): FramedPart[] {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const dashBoundary = Buffer.from(`--${boundary}`, 'latin1');
  const delimiter = Buffer.concat([CRLF, dashBoundary]);
  let pos: number;
  if (buf.subarray(0, dashBoundary.length).equals(dashBoundary)) {
    pos = 0;
  } else {
    const first = buf.indexOf(delimiter);
    if (first < 0) throw new MultipartFramingError('no boundary line found for the given boundary.');
    pos = first + 2; // after a preamble
  }
  const heads: FramedPart[] = [];
  for (let parts = 0; ; parts++) {
    let p = pos + dashBoundary.length;
    if (buf[p] === DASH && buf[p + 1] === DASH) {
      if (parts === 0) throw new MultipartFramingError('no parts before the closing boundary.');
      return heads; // what follows the close delimiter is an epilogue, ignored
    }
    while (buf[p] === 0x20 || buf[p] === 0x09) p++; // transport padding
    if (buf[p] !== CR || buf[p + 1] !== LF) {
      throw new MultipartFramingError(p >= buf.length ? 'the closing boundary is missing.' : 'a boundary line is not followed by CRLF.');
    }
    const headersStart = p + 2;
    const headersEnd = buf.indexOf(CRLFCRLF, headersStart - 2); // -2: a part with no header lines at all
    const dataStart = headersEnd + 4;
    // The next delimiter must not begin inside the header block or its blank line.
    const end = headersEnd < 0 ? -1 : buf.indexOf(delimiter, headersStart - 2);
    if (headersEnd < 0 || (end >= 0 && end < dataStart)) {
      throw new MultipartFramingError(`part ${parts + 1} has no blank line ending its headers.`);
    }
    const head = checkPartHeaders(buf.toString('utf8', headersStart, Math.max(headersStart, headersEnd)), parts + 1);
    if (end < 0) throw new MultipartFramingError('the closing boundary is missing.');
    heads.push({ ...head, dataStart, dataEnd: end });
    pos = end + 2;
  }
}

function checkPartHeaders(block: string, part: number): PartHead {
  const lines = block === '' ? [] : block.split('\r\n');
  let disposition: string | undefined;
  let type: string | undefined;
  for (const line of lines) {
    const m = HEADER_LINE.exec(line);
    if (!m) throw new MultipartFramingError(`part ${part} has a malformed header line.`);
    const name = m[1]!.toLowerCase();
    if (name === 'content-disposition') {
      if (disposition !== undefined) throw new MultipartFramingError(`part ${part} has more than one Content-Disposition.`);
      disposition = m[2]!;
    } else if (name === 'content-type') {
      if (type !== undefined) throw new MultipartFramingError(`part ${part} has more than one Content-Type.`);
      type = m[2]!;
    }
  }
  if (disposition === undefined) throw new MultipartFramingError(`part ${part} has no Content-Disposition.`);
  // As browsers and curl write it: quoted values without backslash escapes (a Windows path keeps its own).
  const { essence, params, repeated } = parseParameterized(disposition, false);
  if (essence !== 'form-data') throw new MultipartFramingError(`part ${part} is not Content-Disposition: form-data.`);
  if (repeated.length > 0) throw new MultipartFramingError(`part ${part}'s Content-Disposition gives ${repeated.join(', ')} more than once.`);
  const name = params.get('name');
  if (!name) throw new MultipartFramingError(`part ${part} has no field name.`);
  const filename = params.get('filename');
  return { name, ...(filename !== undefined && { filename }), ...(type !== undefined && { type }) };
}
