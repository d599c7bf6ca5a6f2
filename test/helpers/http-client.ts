// A small HTTP(S) client for tests: one fresh connection per request, raw bytes in and out, and it
// still returns the response when the server answers before the upload finished (early 413s).
// Every response from a server that startTestServer started is checked against /openapi.json.

import http from 'node:http';
import https from 'node:https';
import { documentedOrigins } from './documented-origins.js';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json(): any;
  text(): string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | number>;
  body?: string | Uint8Array;
  /** Write the body in chunks without Content-Length (chunked transfer encoding). */
  chunked?: boolean;
  /** Extra CA (self-signed TLS). */
  ca?: string | Buffer;
}

export function request(url: string, opts: RequestOptions = {}): Promise<TestResponse> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  const headers: Record<string, string | number> = { ...opts.headers };
  if (opts.body !== undefined && !opts.chunked && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
    headers['Content-Length'] = typeof opts.body === 'string' ? Buffer.byteLength(opts.body) : opts.body.byteLength;
  }
  return new Promise((resolve, reject) => {
    const req = mod.request(u, { method: opts.method ?? 'GET', headers, agent: false, ...(opts.ca && { ca: opts.ca }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const response: TestResponse = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          text: () => body.toString('utf8'),
          json: () => JSON.parse(body.toString('utf8')),
        };
        if (!documentedOrigins.has(u.origin)) {
          resolve(response);
          return;
        }
        // A test server's answer must be one the OpenAPI document describes (a test that gets another fails here).
        import('./openapi-check.js')
          .then((check) => check.assertDocumented({ method: opts.method ?? 'GET', path: u.pathname, status: response.status, headers: res.headers, body }))
          .then(() => resolve(response), reject);
      });
      res.on('error', reject);
    });
    // After an early answer the server may stop reading: write errors then are expected.
    req.on('error', (err) => reject(err));
    if (opts.body === undefined) {
      req.end();
    } else if (opts.chunked) {
      const data = typeof opts.body === 'string' ? Buffer.from(opts.body) : Buffer.from(opts.body);
      const step = 64 * 1024;
      let offset = 0;
      const pump = (): void => {
        while (offset < data.length) {
          const ok = req.write(data.subarray(offset, offset + step));
          offset += step;
          if (!ok) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    } else {
      req.end(opts.body);
    }
  });
}

/** Build a multipart/form-data body by hand, so tests control filenames and part headers exactly. */
export interface Part {
  name: string;
  value: string | Uint8Array;
  filename?: string;
  /** Part Content-Type; omitted entirely when undefined (python requests' behaviour for files). */
  type?: string;
}

export function multipart(
  parts: Part[],
  boundary = `----cutout${Math.random().toString(16).slice(2)}`,
): {
  body: Buffer;
  contentType: string;
} {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type !== undefined) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The remove.bg error envelope's first entry, asserting the envelope shape on the way. */
export function firstError(res: TestResponse): { title: string; code?: string; detail?: string } {
  const body = res.json() as { errors?: Array<{ title: string; code?: string; detail?: string }> };
  if (!Array.isArray(body.errors) || body.errors.length !== 1) throw new Error(`not an error envelope: ${res.text()}`);
  return body.errors[0]!;
}
