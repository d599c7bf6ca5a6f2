// The service serves HTTPS itself (SSLApp) with a throwaway self-signed certificate.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { multipart, request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';
import { makeSelfSigned } from '../helpers/tls-files.js';

t.test('https', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cutout-tls-')); // not t.testdir(): the server helper re-creates that
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { cert, key } = makeSelfSigned(dir);
  const { url } = await startTestServer(t, { config: { tlsCert: cert, tlsKey: key } });
  t.match(url, /^https:\/\//);
  const ca = readFileSync(cert);
  const health = await request(`${url}/healthz`, { ca });
  t.equal(health.status, 200);
  const png = await makeImage('png');
  const { body, contentType } = multipart([{ name: 'image_file', value: png, filename: 'image_file' }]);
  const res = await request(`${url}/v1.0/removebg`, { method: 'POST', ca, headers: { 'X-Api-Key': KEY, 'Content-Type': contentType }, body });
  t.equal(res.status, 200);
  t.same(res.body, png);
  await t.rejects(request(`${url}/healthz`), /self.signed|certificate/i, 'untrusted without the CA');
});
