// The pages the service serves to people: the demo at `/`, the API docs at `/docs`, the OpenAPI
// document at `/openapi.json`, and their assets. Every file is named here, one route each; nothing
// is read or imported until its route is asked for (idle memory stays where it was).

import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Handler, Routes } from '../http/context.js';
import { staticFile } from './static-file.js';

/** src/web/static/ from this file's place in dist/src/web/ or src/web/ (the assets are not compiled). */
export function staticDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.includes(`${sep}dist${sep}`) ? join(here, '..', '..', '..', 'src', 'web', 'static') : join(here, 'static');
}

/** swagger-ui-dist's folder: resolved on the first docs request. */
function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';

/** Our own files change with the service and carry no version in their names: revalidate each time (ETag). */
const REVALIDATE = 'no-cache';
/** The docs renderer changes only with its package version: a day without asking. */
const VENDOR = 'public, max-age=86400';

// Same-origin only: the page calls this service and nothing else. Pictures may come from anywhere
// the user points (`image_url` previews) and from the page's own blob: URLs.
const DEMO_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data: http: https:; connect-src 'self'; " +
  "form-action 'none'; base-uri 'none'; frame-ancestors 'none'";
// Swagger UI sets style attributes from script and shows inline SVG icons as data: URLs.
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

function own(name: string, contentType: string, headers?: Record<string, string>): Handler {
  return staticFile(() => ({ file: join(staticDir(), name), contentType, cacheControl: REVALIDATE, ...(headers && { headers }) }));
}

function vendor(name: string, contentType: string): Handler {
  return staticFile(() => ({ file: join(swaggerUiDir(), name), contentType, cacheControl: VENDOR }));
}

/** The document is built on the first request (a dynamic import) and its text kept: about 70 KB. */
function openApiJson(): Handler {
  let text: Promise<string> | undefined;
  return async (ctx) => {
    text ??= import('./openapi-document.js').then((m) => JSON.stringify(m.openApiDocument()));
    ctx.send(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': REVALIDATE, 'X-Content-Type-Options': 'nosniff' }, await text);
  };
}

export function webRoutes(): Routes {
  return {
    '/': { GET: own('index.html', HTML, { 'Content-Security-Policy': DEMO_CSP }) },
    '/demo/demo.css': { GET: own('demo.css', CSS) },
    '/demo/demo.js': { GET: own('demo.js', JS) },
    '/demo/demo-shadow.js': { GET: own('demo-shadow.js', JS) },
    '/docs': { GET: own('docs.html', HTML, { 'Content-Security-Policy': DOCS_CSP }) },
    '/docs/docs.css': { GET: own('docs.css', CSS) },
    '/docs/docs.js': { GET: own('docs.js', JS) },
    '/docs/swagger-ui.css': { GET: vendor('swagger-ui.css', CSS) },
    '/docs/swagger-ui-bundle.js': { GET: vendor('swagger-ui-bundle.js', JS) },
    '/openapi.json': { GET: openApiJson() },
  };
}
