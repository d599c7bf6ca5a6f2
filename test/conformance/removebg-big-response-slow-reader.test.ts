// A big answer (a cutout PNG of several MB) to a client that stops reading for a while: it arrives
// whole and byte for byte, streamed from its own buffer as the socket takes it (http/context.ts
// endStreamed), and the connection serves the next request after it.
import { createHash } from 'node:crypto';
import http from 'node:http';
import t from 'tap';
import { multipart } from '../helpers/http-client.js';
import { KEY, startTestServer } from '../helpers/server.js';
import type { RemoveResult } from '../../src/pool/protocol.js';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

// A PNG signature and IHDR, then 12 MB of bytes no compression would shrink.
function bigPng(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  Buffer.from('89504e470d0a1a0a0000000d49484452000001000000010008060000001f15c489', 'hex').copy(out);
  for (let i = 33, x = 7; i < bytes; i++) out[i] = x = (x * 1103515245 + 12345) >>> 16;
  return out;
}

function post(agent: http.Agent, url: string, body: Buffer, contentType: string, pauseMs: number): Promise<{ status: number; body: Buffer; length: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1.0/removebg`,
      { method: 'POST', agent, headers: { 'X-Api-Key': KEY, 'Content-Type': contentType, 'Content-Length': body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        let paused = false;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (!paused && pauseMs > 0) {
            // Stop reading after the first chunk: the server's socket fills, the rest must wait.
            paused = true;
            res.pause();
            setTimeout(() => res.resume(), pauseMs);
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), length: Number(res.headers['content-length']) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

t.test('a 12 MB answer to a reader that pauses arrives whole, and the connection goes on', async (t) => {
  const { url, pool } = await startTestServer(t);
  const png = bigPng(12 * 1024 * 1024);
  pool.respond = (task): RemoveResult => ({
    ok: true,
    data: new Uint8Array(task.input),
    contentType: 'image/png',
    width: 256,
    height: 256,
    inputWidth: 256,
    inputHeight: 256,
    foreground: { top: 0, left: 0, width: 256, height: 256 },
    timings: {},
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const { body, contentType } = multipart([
    { name: 'image_file', value: png, filename: 'big.png' },
    { name: 'size', value: 'full' },
  ]);
  const slow = await post(agent, url, body, contentType, 700);
  t.equal(slow.status, 200);
  t.equal(slow.length, png.length, 'Content-Length is the whole PNG');
  t.equal(slow.body.length, png.length, 'every byte arrived');
  t.equal(sha(slow.body), sha(png), 'byte for byte');
  const next = await post(agent, url, body, contentType, 0);
  t.equal(next.status, 200, 'the same connection answers the next request');
  t.equal(sha(next.body), sha(png));
});
