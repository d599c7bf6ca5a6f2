// The start line's address: the one the server is bound to (`http://0.0.0.0:8080` on the default
// host), so the operator sees what is exposed, and for a wildcard bind the local URL to open. The
// server's own `url` (what tests and benchmarks connect to) names a reachable address instead.

/** `cutout listening on http://0.0.0.0:8080`: the bound host and port, with `url`'s scheme. */
export function listeningLine(url: string, host: string, port: number): string {
  const scheme = url.startsWith('https:') ? 'https' : 'http';
  return `cutout listening on ${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** `; open http://127.0.0.1:8080/ on this machine` after a wildcard bind (every interface); '' otherwise. */
export function localHint(url: string, host: string): string {
  if (host !== '0.0.0.0' && host !== '::') return '';
  const everyInterface = host === '::' ? 'every interface' : 'every IPv4 interface';
  return `; ${everyInterface}: open ${url}/ on this machine`;
}
