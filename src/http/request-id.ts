// The request id: the client's X-Request-Id when it is sane (so a proxy's or a client's id carries
// through to our log line), else a fresh UUID. Sent back on every response.

import { randomUUID } from 'node:crypto';

/** Ids from tracing systems (UUIDs, ULIDs, `Root=1-…;Parent=…`) fit; spaces, quotes, commas and control characters do not. */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:;=+/@-]{0,127}$/;

export function requestIdFor(incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
