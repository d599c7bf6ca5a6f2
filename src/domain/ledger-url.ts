// `--ledger` / `CUTOUT_LEDGER_URL`: where the ledger lives. Empty means LMDB in the data folder (the
// default); a postgres:// URL means PostgreSQL shared by every node. Pure (config parsing uses it), and
// never echoes a password: every message shows the URL redacted.

export class LedgerUrlError extends Error {
  readonly code = 'invalid_ledger_url';
}

/** The URL with any password replaced by `***` (for messages and logs). */
export function redactUrl(text: string): string {
  try {
    const u = new URL(text);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    // Not a URL: hide whatever sits between '://user:' and '@'.
    return text.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
  }
}

/** Checks a postgres URL; undefined when none was given. Throws LedgerUrlError naming the problem. */
export function parseLedgerUrl(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const shown = redactUrl(text.trim());
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    throw new LedgerUrlError(`Expected a postgres://user:password@host:port/database URL for --ledger but received '${shown}'`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new LedgerUrlError(`Expected a postgres:// or postgresql:// URL for --ledger but received '${shown}' (leave it unset for the LMDB ledger in --data)`);
  }
  // A unix-socket URL (postgres:///db?host=/run/postgresql) has no host of its own.
  if (!u.hostname && !u.searchParams.get('host')) throw new LedgerUrlError(`Expected a host in the --ledger URL '${shown}'`);
  if (u.port !== '' && !(Number(u.port) >= 1 && Number(u.port) <= 65535))
    throw new LedgerUrlError(`Expected a port from 1 to 65535 in the --ledger URL '${shown}'`);
  if (u.pathname.length <= 1) throw new LedgerUrlError(`Expected a database name in the --ledger URL '${shown}' (postgres://host/database)`);
  return text.trim();
}
