// A shutdown while a big cut-out (a noisy photo at size=full, several MB of PNG) is still being
// streamed: close() (what SIGTERM runs) waits until its last byte is with the kernel, so a reader
// slower than the stop gets every byte, charged once. A reader that stops is cut at the drain
// deadline, with a log line saying how much of the answer got out.
import http from 'node:http';
import sharp from 'sharp';
import t from 'tap';
import { multipart } from '../helpers/http-client.js';
import { noisySubject } from '../helpers/images.js';
import { tryRealPool } from '../helpers/real.js';
import { KEY, startTestServer } from '../helpers/server.js';
import type { Logger } from '../../src/http/server.js';

/**
 * The noisy subject's cut-out is a PNG of ~6.5 MB, more than loopback's kernel buffers hold for a
 * reader that has stopped (a 4 MB send buffer): the rest waits on the reader.
 */
const WIDTH = 2400;
const HEIGHT = 1800;
const BIG_ANSWER_BYTES = 4 * 1024 * 1024;

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => void lines.push(m), error: (m) => void lines.push(m) };
}

interface Answer {
  res: http.IncomingMessage;
  /** Resolves with the whole body, or with what came before the connection was closed. */
  body: Promise<{ bytes: Buffer; complete: boolean }>;
}

/** POST the photo; resolves at the answer's headers, with its body paused (nothing more is read until `read` is called). */
function post(url: string, body: Buffer, contentType: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1.0/removebg`,
      { method: 'POST', agent: false, headers: { 'X-Api-Key': KEY, 'Content-Type': contentType, 'Content-Length': body.length } },
      (res) => {
        res.pause();
        const chunks: Buffer[] = [];
        const done = new Promise<{ bytes: Buffer; complete: boolean }>((settle) => {
          res.on('end', () => settle({ bytes: Buffer.concat(chunks), complete: true }));
          res.on('error', () => settle({ bytes: Buffer.concat(chunks), complete: false }));
          res.on('close', () => settle({ bytes: Buffer.concat(chunks), complete: res.complete }));
        });
        res.on('data', (c: Buffer) => chunks.push(c));
        resolve({ res, body: done });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Read the paused answer 16 kB at a time, one step per turn of the event loop. */
function readSlowly(res: http.IncomingMessage): void {
  const step = () => {
    if (res.readableEnded || res.destroyed) return;
    const chunk = res.read(16 * 1024) ?? res.read();
    if (chunk === null) res.once('readable', step);
    else setImmediate(step);
  };
  step();
}

const real = await tryRealPool({ workers: 1 });
if ('skip' in real) {
  t.comment(real.skip);
  t.pass('skipped: no real pool');
} else {
  const pool = real.pool;
  t.teardown(() => pool.close());
  const { body, contentType } = multipart([
    { name: 'image_file', value: await noisySubject(WIDTH, HEIGHT), filename: 'noise.png' },
    { name: 'size', value: 'full' },
  ]);

  t.test('a shutdown during a streamed answer waits for its last byte: the slow reader gets the whole PNG, charged once', async (t) => {
    const log = recordingLog();
    const { url, server, ledger } = await startTestServer(t, { pool: pool as never, log });
    const acct = ledger.accountOf(KEY)!;
    const before = ledger.balancesNow(acct.id).total;
    const answer = await post(url, body, contentType);
    const length = Number(answer.res.headers['content-length']);
    t.equal(answer.res.statusCode, 200);
    t.ok(length >= BIG_ANSWER_BYTES, `a big answer (${length} bytes)`);
    // The handler is done (charged, answered); what keeps the request in flight is the body the paused reader has not taken.
    t.equal(server.inflight, 1, 'the answer is still being written when the shutdown starts');

    let closed = false;
    const closing = server.close().then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    t.equal(closed, false, 'close() waits for the answer');
    readSlowly(answer.res);
    const got = await answer.body;
    await closing;

    t.equal(got.complete, true, 'the body ended, not cut');
    t.equal(got.bytes.length, length, 'every byte of Content-Length arrived');
    const meta = await sharp(got.bytes).metadata();
    t.same([meta.format, meta.width, meta.height, meta.channels], ['png', WIDTH, HEIGHT, 4], 'a full-size RGBA PNG');
    const pixels = await sharp(got.bytes).raw().toBuffer();
    t.equal(pixels.length, WIDTH * HEIGHT * 4, 'it decodes to the last row');
    const charged = Number(answer.res.headers['x-credits-charged']);
    t.equal(charged, 1, 'one credit announced');
    t.equal(before - ledger.balancesNow(acct.id).total, charged, 'the balance fell by what was announced');
    t.same(ledger.counts, { reserve: 1, settle: 1, refund: 0 }, 'charged once, nothing refunded');
    t.notMatch(log.lines.join('\n'), /drain:/, 'nothing was cut');
  });

  t.test('a reader that stops is cut at the drain deadline, and the log says how much of the answer got out', async (t) => {
    const log = recordingLog();
    const { url, server, events } = await startTestServer(t, { pool: pool as never, log, config: { drainTimeoutMs: 200 } });
    const answer = await post(url, body, contentType);
    const length = Number(answer.res.headers['content-length']);
    t.equal(answer.res.statusCode, 200);
    t.equal(server.inflight, 1, 'the answer is still being written');
    const ended = events.nextEnd('/v1.0/removebg');

    await server.close(); // the reader never reads again
    const info = await ended;
    t.equal(server.inflight, 0);
    t.equal(info.aborted, true, 'the connection was closed under the answer');
    t.ok(info.bytesOut < length, `the request's bytes out are what got out (${info.bytesOut} of ${length})`);
    const text = log.lines.join('\n');
    t.match(text, /drain: 1 request\(s\) still in flight after 0\.2 s \(--drain-timeout\); closing their connections/);
    const cut = /drain: cutting request #\d+ POST \/v1\.0\/removebg from \S+ while responding: (\d+) of (\d+) body bytes sent \(status 200\)/.exec(text);
    t.ok(cut, 'the cut request is named');
    t.equal(Number(cut?.[2]), length, "with the answer's length");
    t.equal(Number(cut?.[1]), info.bytesOut, 'and the bytes handed over, as the request log has them');
    answer.res.resume();
    const got = await answer.body;
    t.equal(got.complete, false, 'the client sees a cut body, never a complete-looking one');
    t.ok(got.bytes.length <= info.bytesOut, 'it got at most what was sent');
  });
}
