// Content-Type header parsing (RFC 9110 media type + parameters), and the same shape of header in a
// multipart part's Content-Disposition, whose quoted values are not backslash-escaped. Pure.

export interface MediaType {
  /** Lower-cased `type/subtype`, '' when the header is absent. */
  essence: string;
  /** Parameter names lower-cased; quoted values unquoted; the first of a repeated name. */
  params: ReadonlyMap<string, string>;
  /** Parameter names given more than once (lower-cased). */
  repeated: readonly string[];
}

/** RFC 9110 quoted-string: `\"` and `\\` are quoted pairs. */
const ESCAPED_PARAM = /\s*([^=;\s]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]*)\s*;?/g;
/** WHATWG form encoding (RFC 7578 §4.2): a `"` is sent as %22, and a backslash is a plain character. */
const PLAIN_PARAM = /\s*([^=;\s]+)\s*=\s*("([^"]*)"|[^;]*)\s*;?/g;

export function parseContentType(header: string | undefined): MediaType {
  return parseParameterized(header, true);
}

/**
 * `value; name=token; name="quoted"`: the value lower-cased, parameter names in any case. What is
 * not `name=value` between semicolons is passed over. `backslashEscapes`: quoted values may hold
 * quoted pairs (a header); without, a backslash is kept (a multipart part's Content-Disposition).
 */
export function parseParameterized(header: string | undefined, backslashEscapes: boolean): MediaType {
  const params = new Map<string, string>();
  const repeated: string[] = [];
  if (!header) return { essence: '', params, repeated };
  const semi = header.indexOf(';');
  const essence = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  const rest = semi < 0 ? '' : header.slice(semi + 1);
  const re = new RegExp(backslashEscapes ? ESCAPED_PARAM : PLAIN_PARAM);
  for (let m = re.exec(rest); m; m = re.exec(rest)) {
    const name = m[1]!.toLowerCase();
    const quoted = m[3];
    const value = quoted === undefined ? m[2]!.trim() : backslashEscapes ? quoted.replace(/\\(.)/g, '$1') : quoted;
    if (params.has(name)) repeated.push(name);
    else params.set(name, value);
  }
  return { essence, params, repeated };
}
