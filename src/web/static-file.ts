// A route handler that answers with one file from disk. The route table (web/routes.ts) names every
// file, so nothing taken from a URL ever becomes part of a path: traversal has nothing to work on.
// The file is read on each request and not kept (the OS page cache keeps it warm; our heap holds
// nothing between requests); an ETag from its size and mtime lets browsers revalidate with a 304.

import { readFile, stat } from 'node:fs/promises';
import type { Handler, RequestContext } from '../http/context.js';

export interface StaticAsset {
  /** Absolute path on disk. */
  file: string;
  contentType: string;
  cacheControl: string;
  /** Extra response headers (a page's Content-Security-Policy). */
  headers?: Readonly<Record<string, string>>;
}

/** Headers every file answer carries: no MIME sniffing, no referrer sent on to other sites. */
const FILE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

/** `locate` runs on the first request, so resolving a file (a package's folder) costs nothing at start. */
export function staticFile(locate: () => StaticAsset): Handler {
  let asset: StaticAsset | undefined;
  return async (ctx: RequestContext) => {
    asset ??= locate();
    const info = await stat(asset.file);
    const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const headers = { ...FILE_HEADERS, ...asset.headers, 'Cache-Control': asset.cacheControl, ETag: etag };
    if (matchesEtag(ctx.header('if-none-match'), etag)) {
      ctx.sendWithoutBody(304, headers);
      return;
    }
    const body = await readFile(asset.file);
    ctx.send(200, { ...headers, 'Content-Type': asset.contentType }, body);
  };
}

/** RFC 9110 §13.1.2: a list of entity tags or `*`, compared weakly (a W/ prefix is ignored). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
