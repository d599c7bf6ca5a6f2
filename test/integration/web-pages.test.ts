// The demo page, the docs page and their assets: the bytes on disk with the right type, caching
// headers, ETag revalidation (304 without a body), same-origin references only, and hostile paths
// (traversal, encoded dots, NUL, long targets) answered 404 without a byte of any file.

import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { assertDocumented } from '../helpers/openapi-check.js';
import { startTestServer } from '../helpers/server.js';
import { staticDir } from '../../src/web/routes.js';

const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const FILES: Array<{ path: string; file: string; type: string; cache: string; csp: boolean }> = [
  { path: '/', file: join(staticDir(), 'index.html'), type: 'text/html; charset=utf-8', cache: 'no-cache', csp: true },
  { path: '/demo/demo.css', file: join(staticDir(), 'demo.css'), type: 'text/css; charset=utf-8', cache: 'no-cache', csp: false },
  { path: '/demo/demo.js', file: join(staticDir(), 'demo.js'), type: 'text/javascript; charset=utf-8', cache: 'no-cache', csp: false },
  { path: '/demo/demo-shadow.js', file: join(staticDir(), 'demo-shadow.js'), type: 'text/javascript; charset=utf-8', cache: 'no-cache', csp: false },
  { path: '/docs', file: join(staticDir(), 'docs.html'), type: 'text/html; charset=utf-8', cache: 'no-cache', csp: true },
  { path: '/docs/docs.css', file: join(staticDir(), 'docs.css'), type: 'text/css; charset=utf-8', cache: 'no-cache', csp: false },
  { path: '/docs/docs.js', file: join(staticDir(), 'docs.js'), type: 'text/javascript; charset=utf-8', cache: 'no-cache', csp: false },
  { path: '/docs/swagger-ui.css', file: join(swaggerDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8', cache: 'public, max-age=86400', csp: false },
  {
    path: '/docs/swagger-ui-bundle.js',
    file: join(swaggerDir, 'swagger-ui-bundle.js'),
    type: 'text/javascript; charset=utf-8',
    cache: 'public, max-age=86400',
    csp: false,
  },
];

/** A GET with the target sent exactly as given (URL objects would resolve `..` and re-encode). */
function rawGet(base: string, target: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, method: 'GET', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('each page and asset is the file on disk, with its type and caching headers', async (t) => {
  const { url } = await startTestServer(t);
  for (const f of FILES) {
    const res = await request(url + f.path);
    t.equal(res.status, 200, f.path);
    t.equal(res.headers['content-type'], f.type, `${f.path} content type`);
    t.equal(res.headers['cache-control'], f.cache, `${f.path} Cache-Control`);
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${f.path} nosniff`);
    t.match(res.headers.etag, /^"[0-9a-f]+-[0-9a-f]+"$/, `${f.path} ETag`);
    t.equal(res.headers['content-security-policy'] !== undefined, f.csp, `${f.path} CSP only on pages`);
    t.ok(res.body.equals(readFileSync(f.file)), `${f.path} bytes are ${f.file}`);
  }
});

t.test('the pages allow only same-origin scripts, styles and requests', async (t) => {
  const { url } = await startTestServer(t);
  for (const path of ['/', '/docs']) {
    const csp = String((await request(url + path)).headers['content-security-policy']);
    t.match(csp, /default-src 'none'/, `${path}: nothing unless allowed`);
    t.match(csp, /script-src 'self'(;|$)/, `${path}: scripts from this server only`);
    t.match(csp, /connect-src 'self'(;|$)/, `${path}: requests to this server only`);
    t.match(csp, /frame-ancestors 'none'/, `${path}: not framed`);
  }
});

t.test('every asset a page references is served here (no CDN, no web font)', async (t) => {
  const { url } = await startTestServer(t);
  for (const page of ['/', '/docs']) {
    const html = (await request(url + page)).text();
    const refs = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    t.ok(refs.length >= 3, `${page} references its assets`);
    for (const ref of refs) {
      if (ref === 'data:,') continue; // the empty favicon: keeps browsers from asking for /favicon.ico
      t.match(ref, /^\/(?!\/)/, `${page}: '${ref}' is a path on this server`);
      t.equal((await request(url + ref)).status, 200, `${page}: ${ref} is served`);
    }
  }
  const css = (await request(`${url}/demo/demo.css`)).text();
  t.notMatch(css, /@import|url\(|@font-face/, 'the demo stylesheet loads nothing else');
});

t.test('If-None-Match with the current ETag: 304, no body and no Content-Length', async (t) => {
  const { url } = await startTestServer(t);
  for (const f of FILES.slice(0, 2)) {
    const first = await request(url + f.path);
    const etag = String(first.headers.etag);
    const again = await request(url + f.path, { headers: { 'If-None-Match': etag } });
    t.equal(again.status, 304, `${f.path} unchanged`);
    t.equal(again.body.length, 0);
    t.equal(again.headers['content-length'], undefined, 'a 304 carries no Content-Length (RFC 9110 §8.6)');
    t.equal(again.headers.etag, etag);
    t.equal(again.headers['cache-control'], f.cache);
    const list = await request(url + f.path, { headers: { 'If-None-Match': `"0-0", W/${etag}` } });
    t.equal(list.status, 304, 'a list, compared weakly');
    const other = await request(url + f.path, { headers: { 'If-None-Match': '"0-0"' } });
    t.equal(other.status, 200, 'another ETag gets the file');
    t.ok(other.body.equals(readFileSync(f.file)));
  }
});

t.test('POST to a page is 405 with Allow; OPTIONS is the preflight', async (t) => {
  const { url } = await startTestServer(t);
  const post = await request(`${url}/`, { method: 'POST', body: 'x' });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, 'GET, HEAD, OPTIONS');
  t.equal(post.json().errors[0].code, 'method_not_allowed');
  const pre = await request(`${url}/docs`, { method: 'OPTIONS' });
  t.equal(pre.status, 204);
});

t.test('hostile paths: 404 JSON, never a file', async (t) => {
  const { url } = await startTestServer(t);
  const secret = readFileSync(new URL('../../../package.json', import.meta.url))
    .toString('utf8')
    .slice(0, 40);
  const targets = [
    '/../package.json',
    '/../../../../etc/passwd',
    '/demo/../../package.json',
    '/demo/../demo/demo.js',
    '/demo/./demo.js',
    '/demo//demo.js',
    '//demo/demo.js',
    '/demo/%2e%2e/%2e%2e/package.json',
    '/%2e%2e/%2e%2e/package.json',
    '/demo/%2E%2E%2F%2E%2E%2Fpackage.json',
    '/docs/..%2f..%2fpackage.json',
    '/docs/%252e%252e/package.json',
    '/demo/demo.js%00',
    '/demo/demo.js%00.html',
    '/%00',
    '/demo/demo%2ejs',
    '/DEMO/DEMO.JS',
    '/demo/demo.js/..',
    '/docs/swagger-ui-dist/package.json',
    '/docs/package.json',
    '/docs/swagger-ui-bundle.js.map',
    '/src/web/static/index.html',
    '/index.html',
    '/demo/',
    '/demo\\..\\package.json',
    `/${'a'.repeat(8_000)}`,
    `/demo/${'../'.repeat(2_000)}package.json`,
  ];
  for (const target of targets) {
    const res = await rawGet(url, target);
    const label = target.length > 60 ? `${target.slice(0, 60)}… (${target.length} chars)` : target;
    t.equal(res.status, 404, `${label}: 404`);
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', `${label}: the JSON error`);
    t.equal(JSON.parse(res.body.toString('utf8')).errors[0].code, 'not_found', label);
    t.notOk(res.body.toString('utf8').includes(secret), `${label}: no file content`);
    assertDocumented({ method: 'GET', path: target.split('?')[0]!, status: res.status, headers: res.headers, body: res.body });
  }
});

t.test('a trailing slash and a query string reach the same page', async (t) => {
  const { url } = await startTestServer(t);
  const plain = await rawGet(url, '/docs');
  t.equal((await rawGet(url, '/docs/')).body.equals(plain.body), true, '/docs/ is /docs');
  t.equal((await rawGet(url, '/?../../package.json')).status, 200, 'a query never names a file');
});
