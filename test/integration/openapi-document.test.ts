// /openapi.json: valid OpenAPI 3.1 by @seriousme/openapi-schema-validator, every schema in it compiles
// under ajv's strict 2020-12 mode, it lists exactly the routes the server has (methods included), and
// the response check that every test server's answers go through rejects what the document does not say.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createApi } from '../../src/api/routes.js';
import { loadConfig } from '../../src/config.js';
import { openApiDocument } from '../../src/web/openapi-document.js';
import { request } from '../helpers/http-client.js';
import * as check from '../helpers/openapi-check.js';
import { FakeLedger } from '../helpers/fake-ledger.js';
import { FakePool } from '../helpers/fake-pool.js';
import { startTestServer } from '../helpers/server.js';

t.test('the served document is valid OpenAPI 3.1', async (t) => {
  const { url } = await startTestServer(t);
  const res = await request(`${url}/openapi.json`);
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  const served = res.json();
  t.same(served, openApiDocument(), 'the source file, as JSON');
  t.equal(served.openapi, '3.1.0');
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  t.equal(served.info.version, pkg.version, "info.version is the package's");

  const validator = new Validator();
  const result = await validator.validate(served);
  t.same(result.errors ?? [], [], 'no validation errors');
  t.equal(result.valid, true, 'valid');
  t.equal(validator.version, '3.1', 'validated against the 3.1 schema');
});

t.test('every schema in it compiles under ajv strict mode (2020-12)', async (t) => {
  const doc = openApiDocument() as Record<string, any>;
  let count = 0;
  // A probe response through each documented header and media schema compiles it.
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      for (const [i, n] of node.entries()) walk(n, `${at}/${i}`);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === 'schema' && v && typeof v === 'object') {
        t.doesNotThrow(() => check.compileSchema(v as object), `${at}/schema`);
        count++;
      } else walk(v, `${at}/${k}`);
    }
  };
  walk(doc.paths, '#/paths');
  walk(doc.components.headers, '#/components/headers');
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, object>)) {
    t.doesNotThrow(() => check.compileSchema(schema), `#/components/schemas/${name}`);
    count++;
  }
  t.ok(count > 50, `${count} schemas compiled`);
});

t.test('the document lists exactly the routes the server has', async (t) => {
  const config = { ...loadConfig([], {}), demoKey: false, dataDir: t.testdir() };
  // Every optional route on: the sandbox (on by default) and /metrics (when the server has a registry).
  const metrics = { contentType: 'text/plain; version=0.0.4; charset=utf-8', render: async () => '' };
  const { routes } = createApi({ config, pool: new FakePool(), ledger: new FakeLedger(), log: { info() {}, error() {} }, metrics }, () => true);
  t.ok(routes['/sandbox/v1.0/removebg'] && routes['/metrics'], 'the sandbox and /metrics are routed');
  const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  t.same(Object.keys(doc.paths).sort(), Object.keys(routes).sort(), 'the same paths');
  for (const [path, methods] of Object.entries(routes)) {
    const documented = Object.keys(doc.paths[path] ?? {})
      .filter((k) => k !== 'options')
      .map((m) => m.toUpperCase());
    t.same(documented.sort(), Object.keys(methods).sort(), `${path}: the same methods`);
    t.ok(doc.paths[path]?.options, `${path}: its preflight`);
  }
});

t.test('responses the document does not describe are problems', async (t) => {
  const ok: check.ObservedResponse = {
    method: 'GET',
    path: '/healthz',
    status: 200,
    headers: {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'X-Width',
      'x-request-id': 'r-1',
      'content-type': 'application/json; charset=utf-8',
    },
    body: Buffer.from('{"status":"ok"}'),
  };
  t.same(check.responseProblems(ok), [], 'a described answer passes');
  const cases: Array<[string, Partial<check.ObservedResponse>, RegExp]> = [
    ['an undescribed status', { status: 418 }, /status 418 is not among/],
    ['an undescribed header', { headers: { ...ok.headers, 'x-secret': '1' } }, /header x-secret is not described/],
    [
      'a required header missing',
      { headers: { 'access-control-expose-headers': 'X', 'x-request-id': 'r-1', 'content-type': 'application/json' } },
      /required header access-control-allow-origin is missing/,
    ],
    [
      'a header against its schema',
      { headers: { ...ok.headers, 'access-control-allow-origin': 'https://evil.example' } },
      /header access-control-allow-origin/,
    ],
    ['a field the schema does not have', { body: Buffer.from('{"status":"ok","extra":1}') }, /must NOT have additional properties/],
    ['a wrong value', { body: Buffer.from('{"status":"fine"}') }, /body/],
    ['a body that is not JSON', { body: Buffer.from('ok') }, /not JSON/],
    ['an undescribed content type', { headers: { ...ok.headers, 'content-type': 'text/plain' } }, /Content-Type 'text\/plain' is not among/],
    ['an undescribed path answering 200', { path: '/admin' }, /not in the document/],
    ['an undescribed method answering 200', { method: 'DELETE' }, /method is not in the document/],
  ];
  for (const [name, change, expected] of cases) {
    const problems = check.responseProblems({ ...ok, ...change });
    t.match(problems.join('\n'), expected, name);
  }
  const wrongAllow = {
    method: 'POST',
    path: '/healthz',
    status: 405,
    headers: {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'X',
      'x-request-id': 'r-1',
      'content-type': 'application/json; charset=utf-8',
      allow: 'GET, POST, OPTIONS',
    },
    body: Buffer.from('{"errors":[{"title":"Method not allowed","code":"method_not_allowed"}]}'),
  };
  t.match(
    check.responseProblems(wrongAllow).join('\n'),
    /Allow 'GET, POST, OPTIONS' but the document lists GET, HEAD, OPTIONS/,
    'a 405 must name the documented methods',
  );
  const wrongCode = {
    ...wrongAllow,
    headers: { ...wrongAllow.headers, allow: 'GET, HEAD, OPTIONS' },
    body: Buffer.from('{"errors":[{"title":"x","code":"teapot"}]}'),
  };
  t.match(check.responseProblems(wrongCode).join('\n'), /must be equal to one of the allowed values/, 'an error code the document does not list');
});

t.test("every test server's responses go through the check", async (t) => {
  const { url } = await startTestServer(t);
  const before = check.checkedResponses;
  await request(`${url}/healthz`);
  await request(`${url}/no-such-route`);
  t.equal(check.checkedResponses, before + 2, 'both checked');
});
