// Against the real worker pool: a photo (a generated figure) gives a real RGBA PNG; hostile images get 400s; aborts refund.
import http from 'node:http';
import sharp from 'sharp';
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { multipart } from '../helpers/http-client.js';
import { pngHeaderClaiming } from '../helpers/images.js';
import { syntheticFigure } from '../helpers/core-fixtures.js';
import { tryRealPool } from '../helpers/real.js';
import { KEY, startTestServer } from '../helpers/server.js';
import type { RemovalPool } from '../../src/pool/pool-api.js';

const real = await tryRealPool({ workers: 1 });
if ('skip' in real) {
  t.comment(real.skip);
  t.pass('skipped: no real pool');
} else {
  const pool = real.pool;
  t.teardown(() => pool.close());
  // Let tests see the moment a task enters the real pool.
  let onRun: (() => void) | null = null;
  const observed: RemovalPool = {
    get ready() {
      return pool.ready;
    },
    stats: () => pool.stats(),
    close: () => pool.close(),
    run(task, signal) {
      onRun?.();
      return pool.run(task, signal);
    },
  };
  const input = await syntheticFigure(480, 338);
  const inMeta = await sharp(input).metadata();

  t.test('a real removal: RGBA PNG with real transparency', async (t) => {
    const { url, ledger } = await startTestServer(t, { pool: observed as never });
    const acct = ledger.accountOf(KEY)!;
    const res = await postImage(url, input, { size: 'preview' });
    t.equal(res.status, 200, res.status === 200 ? 'ok' : res.text());
    t.equal(res.headers['content-type'], 'image/png');
    const meta = await sharp(res.body).metadata();
    t.equal(meta.format, 'png');
    t.equal(meta.channels, 4);
    t.equal(String(meta.width), res.headers['x-width']);
    t.equal(String(meta.height), res.headers['x-height']);
    t.ok(meta.width! * meta.height! <= 250_000 + 1000, 'preview tier: at most ~0.25 MP');
    t.equal(meta.width, inMeta.width, 'a small input keeps its size');
    const alpha = await sharp(res.body).extractChannel(3).raw().toBuffer();
    const transparent = alpha.filter((a) => a < 16).length / alpha.length;
    const opaque = alpha.filter((a) => a > 240).length / alpha.length;
    t.ok(transparent > 0.02, `some background removed (${(transparent * 100).toFixed(1)}% transparent)`);
    t.ok(opaque > 0.02, `some foreground kept (${(opaque * 100).toFixed(1)}% opaque)`);
    const fg = ['top', 'left', 'width', 'height'].map((k) => Number(res.headers[`x-foreground-${k}`]));
    t.ok(fg[2]! > 0 && fg[3]! > 0 && fg[1]! + fg[2]! <= meta.width! && fg[0]! + fg[3]! <= meta.height!, `foreground box ${fg} inside the image`);
    t.equal(ledger.counts.settle, 1);
    t.equal(ledger.slotsInUse(acct.id), 0);
  });

  t.test('hostile images through the real worker', async (t) => {
    const { url, ledger } = await startTestServer(t, { pool: observed as never });
    const acct = ledger.accountOf(KEY)!;
    const before = ledger.balancesNow(acct.id).total;
    const truncated = input.subarray(0, Math.floor(input.length / 3));
    const r1 = await postImage(url, truncated);
    t.equal(r1.status, 400, 'truncated JPEG');
    t.equal(firstError(r1).code, 'failed_to_read_image');
    const bomb = pngHeaderClaiming(100_000, 100_000);
    const r2 = await postImage(url, bomb);
    t.equal(r2.status, 400, 'PNG claiming 100000×100000');
    t.equal(firstError(r2).code, 'resolution_too_high');
    const r3 = await postImage(url, Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(500, 7)]));
    t.equal(r3.status, 400, 'JPEG magic then garbage');
    t.equal(firstError(r3).code, 'failed_to_read_image');
    t.equal(ledger.balancesNow(acct.id).total, before, 'all refunded');
    t.equal(ledger.counts.refund, 3);
  });

  t.test('client disconnect mid-inference on the real pool', async (t) => {
    const { url, ledger, events, server } = await startTestServer(t, { pool: observed as never });
    const acct = ledger.accountOf(KEY)!;
    const before = ledger.balancesNow(acct.id).total;
    const { body, contentType } = multipart([{ name: 'image_file', value: input, filename: 'image_file' }]);
    const started = new Promise<void>((r) => (onRun = r));
    const req = http.request(`${url}/v1.0/removebg`, {
      method: 'POST',
      agent: false,
      headers: { 'X-Api-Key': KEY, 'Content-Type': contentType, 'Content-Length': body.length },
    });
    req.on('error', () => {});
    req.end(body);
    await started;
    onRun = null;
    const aborted = events.nextAbort('/v1.0/removebg');
    const ended = events.nextEnd('/v1.0/removebg');
    req.destroy();
    await aborted;
    const info = await ended; // the running task finishes; its result is dropped
    t.equal(info.status, 0);
    t.equal(ledger.balancesNow(acct.id).total, before, 'credit refunded');
    t.equal(ledger.slotsInUse(acct.id), 0, 'slot freed');
    t.equal(server.inflight, 0);
    t.ok(pool.ready, 'worker survived');
    const next = await postImage(url, input, { size: 'preview', format: 'jpg', bg_color: 'white' });
    t.equal(next.status, 200, 'next request served');
    t.equal(next.headers['content-type'], 'image/jpeg');
    t.equal((await sharp(next.body).metadata()).format, 'jpeg');
  });
}
