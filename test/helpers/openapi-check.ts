// Checks a real response against the OpenAPI document the server serves (src/web/openapi-document.ts):
// the path and method must be described (or answer the document's 404/405), the status must be listed,
// every required header present, every header sent described and valid, the content type listed and a
// JSON body valid against its schema (ajv, JSON Schema 2020-12: OpenAPI 3.1's dialect). Whatever the
// document does not describe is a problem. http-client.ts runs it on every response from a test server.

import { createRequire } from 'node:module';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../src/web/openapi-document.js';

export interface ObservedResponse {
  method: string;
  /** The request target's path as sent (no query). */
  path: string;
  status: number;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Uint8Array;
}

type Obj = Record<string, any>;

/** Headers of the transport itself, which an OpenAPI document does not list. */
const TRANSPORT_HEADERS = new Set(['date', 'content-length', 'connection', 'transfer-encoding', 'keep-alive']);

const SCHEMA_ID = 'cutout-openapi';

export const document: Obj = openApiDocument();

// The document's component schemas as one JSON Schema resource; its '#/components/schemas/X' refs
// become '<id>#/$defs/X', so any inline schema that points at them compiles on its own.
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')
        ? `${SCHEMA_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`
        : rewriteRefs(v);
  }
  return out;
}

// strictSchema: an unknown keyword (a typo, an OpenAPI 3.0 leftover such as `nullable`) is an error.
// strictTypes off: the narrowing halves of allOf name properties without repeating `type: object`.
// Both are CommonJS; require() gives their classes without the default-export dance.
const require = createRequire(import.meta.url);
const Ajv = (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020;
const addFormats = require('ajv-formats') as (ajv: Ajv2020) => void;
const ajv = new Ajv({ strict: true, strictTypes: false, strictRequired: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: SCHEMA_ID, $defs: rewriteRefs(document.components?.schemas ?? {}) as Obj });

const compiled = new WeakMap<object, ValidateFunction>();
export function compileSchema(schema: Obj): ValidateFunction {
  const known = compiled.get(schema);
  if (known) return known;
  const v = ajv.compile(rewriteRefs(schema) as Obj);
  compiled.set(schema, v);
  return v;
}

/** Follows a local `$ref` (`#/components/...`) to what it names. */
function resolve(node: Obj): Obj {
  let n = node;
  for (let hops = 0; typeof n.$ref === 'string'; hops++) {
    if (hops > 10 || !n.$ref.startsWith('#/')) throw new Error(`unresolvable $ref ${n.$ref}`);
    const target = (n.$ref as string)
      .slice(2)
      .split('/')
      .reduce((at: Obj | undefined, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    if (!target) throw new Error(`dangling $ref ${node.$ref}`);
    n = target;
  }
  return n;
}

/** The documented answer for this request: the operation's response, or the 404/405 the document names. */
function findResponse(method: string, rawPath: string, status: number, problems: string[]): { response: Obj; allow?: string[] } | null {
  const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath; // as the server routes
  const unrouted = document['x-unrouted'] as { unknownPath: string; methodNotAllowed: string };
  const item = document.paths[path] as Obj | undefined;
  if (!item) {
    if (status !== 404) problems.push(`${method} ${path}: the path is not in the document, so only its 404 is described (got ${status})`);
    return { response: resolve({ $ref: unrouted.unknownPath }) };
  }
  const listed = Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(k));
  // The document's info: every GET path answers HEAD (GET's headers, no body).
  const methods = listed.includes('get') && !listed.includes('head') ? [...listed, 'head'] : listed;
  const op = (item[method.toLowerCase()] ?? (method.toUpperCase() === 'HEAD' ? item.get : undefined)) as Obj | undefined;
  if (!op) {
    const allow = [...methods.map((m) => m.toUpperCase()).filter((m) => m !== 'OPTIONS'), 'OPTIONS'];
    if (status !== 405) problems.push(`${method} ${path}: the method is not in the document, so only its 405 is described (got ${status})`);
    return { response: resolve({ $ref: unrouted.methodNotAllowed }), allow };
  }
  const response = op.responses?.[String(status)] ?? op.responses?.default;
  if (!response) {
    problems.push(`${method} ${path}: status ${status} is not among the documented ones (${Object.keys(op.responses ?? {}).join(', ')})`);
    return null;
  }
  // A preflight's Allow names the path's methods: the document's, exactly.
  const allow = method.toUpperCase() === 'OPTIONS' && status === 204 ? methods.map((m) => m.toUpperCase()) : undefined;
  return { response: resolve(response), ...(allow && { allow }) };
}

/** A header's text read as its schema's type (numbers in headers are digits). */
function headerValue(text: string, schema: Obj): unknown {
  if ((schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

/** Every way `r` differs from the document; empty when it matches. */
export function responseProblems(r: ObservedResponse): string[] {
  const problems: string[] = [];
  const where = `${r.method} ${r.path} → ${r.status}`;
  const found = findResponse(r.method, r.path, r.status, problems);
  if (!found) return problems;
  const { response, allow } = found;

  // Headers: required ones present, every one sent described and valid.
  const documented = new Map<string, Obj>();
  for (const [name, h] of Object.entries((response.headers ?? {}) as Obj)) documented.set(name.toLowerCase(), resolve(h as Obj));
  for (const [name, h] of documented) {
    if (h.required && r.headers[name] === undefined) problems.push(`${where}: required header ${name} is missing`);
  }
  for (const [name, raw] of Object.entries(r.headers)) {
    if (raw === undefined || TRANSPORT_HEADERS.has(name) || name === 'content-type') continue;
    const h = documented.get(name);
    if (!h) {
      problems.push(`${where}: header ${name} is not described`);
      continue;
    }
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const check = compileSchema(h.schema ?? {});
    if (!check(headerValue(value, h.schema ?? {}))) problems.push(`${where}: header ${name}: '${value}' ${ajv.errorsText(check.errors)}`);
  }
  if (allow) {
    const sent = String(r.headers.allow ?? '')
      .split(/,\s*/)
      .sort();
    if (sent.join() !== [...allow].sort().join()) problems.push(`${where}: Allow '${r.headers.allow}' but the document lists ${allow.join(', ')}`);
  }

  // Body: a listed media type, and a JSON body valid against its schema.
  const content = response.content as Obj | undefined;
  const contentType = String(r.headers['content-type'] ?? '');
  if (r.method.toUpperCase() === 'HEAD') {
    if (r.body.byteLength > 0) problems.push(`${where}: a HEAD answer with ${r.body.byteLength} body bytes`);
    const listedType = !contentType || Object.keys(content ?? {}).some((type) => type.toLowerCase() === contentType.split(';')[0]!.trim().toLowerCase());
    if (!listedType) problems.push(`${where}: Content-Type '${contentType}' is not among ${Object.keys(content ?? {}).join(', ')}`);
    return problems;
  }
  if (!content) {
    if (r.body.byteLength > 0 || contentType) problems.push(`${where}: the document describes no body, got ${r.body.byteLength} bytes of '${contentType}'`);
    return problems;
  }
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  const media = Object.entries(content).find(([type]) => type.toLowerCase() === essence)?.[1] as Obj | undefined;
  if (!media) {
    problems.push(`${where}: Content-Type '${contentType}' is not among ${Object.keys(content).join(', ')}`);
    return problems;
  }
  if (essence === 'application/json') {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(r.body).toString('utf8'));
    } catch (err) {
      problems.push(`${where}: the body is not JSON (${(err as Error).message})`);
      return problems;
    }
    const check = compileSchema(media.schema ?? {});
    if (!check(body))
      problems.push(`${where}: body ${ajv.errorsText(check.errors, { dataVar: 'body' })}: ${Buffer.from(r.body).toString('utf8').slice(0, 300)}`);
  } else if (r.body.byteLength === 0) {
    problems.push(`${where}: empty ${essence} body`);
  }
  return problems;
}

/** Responses checked so far in this process (a test can prove the check ran). */
export let checkedResponses = 0;

export function assertDocumented(r: ObservedResponse): void {
  checkedResponses++;
  const problems = responseProblems(r);
  if (problems.length > 0) throw new Error(`response not described by /openapi.json:\n  ${problems.join('\n  ')}`);
}
