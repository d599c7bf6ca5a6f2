// Malformed multipart bodies (no closing boundary, a field twice, bad part headers) get 400 invalid_request_body and are never charged.
import t from 'tap';
import { firstError } from '../helpers/api.js';
import { multipart, request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

const B = 'cutoutTestBoundary';
const part = (headers: string[], data: Buffer | string) =>
  Buffer.concat([Buffer.from(`--${B}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`), Buffer.from(data), Buffer.from('\r\n')]);
const close = Buffer.from(`--${B}--\r\n`);
const image = (png: Buffer) => part(['Content-Disposition: form-data; name="image_file"; filename="image_file"'], png);
const field = (name: string, value: string) => part([`Content-Disposition: form-data; name="${name}"`], value);

t.test('each malformed body: 400 invalid_request_body, nothing charged, nothing run', async (t) => {
  const { url, ledger, pool } = await startTestServer(t);
  const png = await makeImage('png');
  const acct = ledger.accountOf(KEY)!;
  const before = ledger.balancesNow(acct.id);
  const bodies: Record<string, [Buffer, RegExp]> = {
    'no closing boundary': [Buffer.concat([image(png)]), /closing boundary is missing/],
    'last part cut off before its boundary': [
      Buffer.concat([image(png), Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="size"\r\n\r\nful`)]),
      /closing boundary is missing/,
    ],
    'two image_file parts': [Buffer.concat([image(png), image(png), close]), /'image_file' is given more than once/],
    'two size fields': [Buffer.concat([image(png), field('size', 'preview'), field('size', 'full'), close]), /'size' is given more than once/],
    'a part without Content-Disposition': [Buffer.concat([image(png), part(['Content-Type: text/plain'], 'x'), close]), /no Content-Disposition/],
    'a header line without a colon': [
      Buffer.concat([part(['Content-Disposition: form-data; name="image_file"', 'X-Broken'], png), close]),
      /malformed header line/,
    ],
    'two Content-Dispositions in a part': [
      Buffer.concat([part(['Content-Disposition: form-data; name="size"', 'Content-Disposition: form-data; name="image_file"'], png), close]),
      /more than one Content-Disposition/,
    ],
  };
  for (const [label, [body, detail]] of Object.entries(bodies)) {
    const res = await request(`${url}/v1.0/removebg`, {
      method: 'POST',
      headers: { 'X-Api-Key': KEY, 'Content-Type': `multipart/form-data; boundary=${B}` },
      body,
    });
    t.equal(res.status, 400, label);
    t.match(firstError(res), { code: 'invalid_request_body', detail }, label);
  }
  const urlencoded = await request(`${url}/v1.0/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `image_file_b64=${encodeURIComponent(png.toString('base64'))}&size=preview&size=full`,
  });
  t.equal(urlencoded.status, 400, 'urlencoded field twice');
  t.match(firstError(urlencoded), { code: 'invalid_request_body', detail: /'size' is given more than once/ });
  t.equal(pool.tasks.length, 0, 'no removal ran');
  t.equal(ledger.counts.reserve, 0, 'nothing reserved');
  t.same(ledger.balancesNow(acct.id), before, 'balance unchanged');

  // The same fields, well framed, go through and are charged once.
  const { body, contentType } = multipart([
    { name: 'image_file', value: png, filename: 'image_file' },
    { name: 'size', value: 'full' },
  ]);
  const ok = await request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': contentType }, body });
  t.equal(ok.status, 200);
  t.equal(ledger.balancesNow(acct.id).total, before.total - 1);
});
