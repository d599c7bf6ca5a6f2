// The request log's terminal form: one pino JSON line → one readable line, e.g.
// `12:04:05.123 POST /v1.0/removebg 200 640x427 812 ms (queue 0.4, decode 31, inference 690, composite 52, encode 38) in 1.2 MB out 310 kB acct_x 9f1c…`
// Only used when stdout is a terminal; an unparsable line is passed through as is.

function size(bytes: unknown): string {
  const n = typeof bytes === 'number' ? bytes : 0;
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${Math.round(n / 100) / 10} kB`;
  return `${Math.round(n / 100_000) / 10} MB`;
}

export function prettyLine(json: string): string {
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  if (r.msg !== 'request') return json;
  const time = typeof r.time === 'string' ? r.time.slice(11, 23) : '';
  const ms =
    r.ms && typeof r.ms === 'object'
      ? Object.entries(r.ms as Record<string, number>)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')
      : '';
  const parts = [
    time,
    String(r.method),
    String(r.route ?? 'unmatched'),
    String(r.status) + (r.code ? ` ${String(r.code)}` : ''),
    r.output ? String(r.output) : '',
    `${String(r.total_ms)} ms${ms ? ` (${ms})` : ''}`,
    `in ${size(r.bytes_in)} out ${size(r.bytes_out)}`,
    r.account ? String(r.account) : String(r.client),
    String(r.req_id),
  ];
  return `${parts.filter((p) => p !== '').join(' ')}\n`;
}
