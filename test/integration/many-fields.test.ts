// Bodies with a huge number of fields (a million JSON keys, 300,000 multipart parts or urlencoded
// pairs), keyed and through the sandbox: 400 too_many_fields, nothing charged, nothing run, answered
// without waiting for the rest of the body; a request at the limit goes through as before.
import http from 'node:http';
import t from 'tap';
import { firstError } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { SANDBOX } from '../helpers/sandbox.js';
import { KEY, startTestServer } from '../helpers/server.js';
import { MAX_FIELDS } from '../../src/http/field-limits.js';

const B = 'manyFieldsBoundary';
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

const jsonKeys = (n: number) => ({
  type: 'application/json',
  body: Buffer.from(
    `{${range(n)
      .map((i) => `"k${i}":0`)
      .join(',')}}`,
  ),
});
const multipartParts = (n: number) => ({
  type: `multipart/form-data; boundary=${B}`,
  body: Buffer.from(
    `${range(n)
      .map((i) => `--${B}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`)
      .join('')}--${B}--\r\n`,
  ),
});
const urlencodedPairs = (n: number) => ({
  type: 'application/x-www-form-urlencoded',
  body: Buffer.from(
    range(n)
      .map((i) => `k${i}=v`)
      .join('&'),
  ),
});

t.test('a million JSON keys, 300,000 parts or pairs: 400 too_many_fields, keyed and sandbox', async (t) => {
  const { url, ledger, pool, config, server } = await startTestServer(t);
  // A sandbox body is at most its address's share of the bodies-in-memory budget (413 over it, before
  // a field is counted): the sandbox's own multipart body is sized under it.
  const sandboxLargest = server.bodyBudget.addressBytes;
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id);
  const bodies = {
    '1,000,000 JSON keys': [jsonKeys(1_000_000), 'JSON keys and array elements'],
    '300,000 multipart parts': [multipartParts(300_000), 'multipart parts'],
    '300,000 urlencoded pairs': [urlencodedPairs(300_000), 'form fields'],
    '200,000 multipart parts': [multipartParts(200_000), 'multipart parts'],
  } as const;
  for (const [label, [{ type, body }, what]] of Object.entries(bodies)) {
    t.ok(body.length < config.maxBodyBytes, `${label}: ${body.length} bytes, under the body limit`);
    for (const [route, headers] of [
      ['/v1.0/removebg', { 'X-Api-Key': KEY }],
      [SANDBOX, {}],
      ['/v1.0/improve', { 'X-Api-Key': KEY }],
    ] as const) {
      const res = await request(url + route, { method: 'POST', headers: { ...headers, 'Content-Type': type }, body });
      if (route === SANDBOX && body.length > sandboxLargest) {
        t.equal(res.status, 413, `${label} to ${route}: over the sandbox's largest body`);
        t.equal(firstError(res)?.code, 'file_too_large', `${label} to ${route}`);
        continue;
      }
      t.equal(res.status, 400, `${label} to ${route}`);
      t.same(
        firstError(res),
        { title: 'Too many fields', code: 'too_many_fields', detail: `The request body has more than ${MAX_FIELDS} ${what}.` },
        `${label} to ${route}`,
      );
    }
  }
  t.ok(multipartParts(200_000).body.length <= sandboxLargest, 'the sandbox gets one multipart body it must count');
  t.equal(pool.tasks.length, 0, 'no removal ran');
  t.equal(ledger.counts.reserve, 0, 'nothing reserved');
  t.same(ledger.balancesNow(acct.id), before, 'balance unchanged');
});

t.test('a removal with the limit in fields goes through, keyed and sandbox, in each body type', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const acct = ledger.accountOf(KEY)!;
  const png = await makeImage('png');
  const b64 = png.toString('base64');
  const extra = range(MAX_FIELDS - 2).map((i): [string, string] => [`x_${i}`, 'ignored']);
  const json = { type: 'application/json', body: Buffer.from(JSON.stringify({ image_file_b64: b64, size: 'preview', ...Object.fromEntries(extra) })) };
  const form = {
    type: 'application/x-www-form-urlencoded',
    body: Buffer.from(new URLSearchParams([['image_file_b64', b64], ['size', 'preview'], ...extra]).toString()),
  };
  const parts = [
    `--${B}\r\nContent-Disposition: form-data; name="image_file"; filename="a.png"\r\n\r\n`,
    png,
    `\r\n--${B}\r\nContent-Disposition: form-data; name="size"\r\n\r\npreview\r\n`,
  ];
  for (const [name, value] of extra) parts.push(`--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  const multi = { type: `multipart/form-data; boundary=${B}`, body: Buffer.concat([...parts.map((p) => Buffer.from(p)), Buffer.from(`--${B}--\r\n`)]) };
  let charged = 0;
  for (const [label, { type, body }] of Object.entries({ json, form, multi })) {
    const keyed = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': type }, body });
    t.equal(keyed.status, 200, `${label}, keyed`);
    t.equal(keyed.headers['content-type'], 'image/png');
    charged += Number(keyed.headers['x-credits-charged']);
    const sandbox = await request(url + SANDBOX, { method: 'POST', headers: { 'Content-Type': type }, body });
    t.equal(sandbox.status, 200, `${label}, sandbox`);
    t.equal(sandbox.headers['x-credits-charged'], '0');
  }
  t.ok(charged > 0);
  t.equal(ledger.balancesNow(acct.id).total, 100 - charged, 'charged as ever');
});

t.test('a body over the limit is answered before the rest of it is sent', async (t) => {
  const { url, pool } = await startTestServer(t);
  const { body } = jsonKeys(1_000_000);
  const head = body.subarray(0, 64 * 1024); // about 6,000 keys; the other 11.8 MB never come
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      `${url}/v1.0/removebg`,
      { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json', 'Content-Length': body.length } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode!, text });
        });
      },
    );
    req.on('error', reject);
    req.write(head);
  });
  t.equal(answer.status, 400);
  t.same(JSON.parse(answer.text), {
    errors: [{ title: 'Too many fields', code: 'too_many_fields', detail: `The request body has more than ${MAX_FIELDS} JSON keys and array elements.` }],
  });
  t.equal(pool.tasks.length, 0);
});
