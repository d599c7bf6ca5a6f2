// close() stops accepting, lets the in-flight request finish with 200, then resolves.
import http from 'node:http';
import t from 'tap';
import { multipart, request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

t.test('drain on close', async (t) => {
  const { url, pool, server, ledger } = await startTestServer(t);
  const gate = pool.hold();
  const { body, contentType } = multipart([{ name: 'image_file', value: await makeImage('png'), filename: 'image_file' }]);
  const inflight = request(`${url}/v1.0/removebg`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': contentType }, body });
  await gate.started;
  let closed = false;
  const closing = server.close().then(() => (closed = true));
  // New connections are refused once the listen socket is closed.
  await t.rejects(new Promise((resolve, reject) => http.get(`${url}/healthz`, { agent: false }, resolve).on('error', reject)), { code: 'ECONNREFUSED' });
  t.equal(closed, false, 'still draining');
  gate.release();
  const res = await inflight;
  t.equal(res.status, 200, 'in-flight request completed');
  await closing;
  t.equal(closed, true);
  t.equal(ledger.counts.settle, 1);
  t.equal(pool.closed, false, 'the pool belongs to the caller');
});
