// Content-Type header parsing (RFC 9110 media type + parameters). Pure.

export interface MediaType {
  /** Lower-cased `type/subtype`, '' when the header is absent. */
  essence: string;
  /** Parameter names lower-cased; quoted values unquoted. */
  params: ReadonlyMap<string, string>;
}

export function parseContentType(header: string | undefined): MediaType {
  const params = new Map<string, string>();
  if (!header) return { essence: '', params };
  const semi = header.indexOf(';');
  const essence = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  const rest = semi < 0 ? '' : header.slice(semi + 1);
  const re = /\s*([^=;\s]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]*)\s*;?/g;
  for (let m = re.exec(rest); m; m = re.exec(rest)) {
    const name = m[1]!.toLowerCase();
    const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[2]!.trim();
    if (!params.has(name)) params.set(name, value);
  }
  return { essence, params };
}
