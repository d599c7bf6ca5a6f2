// A CI-sized soak (bench:soak's driver): one real server process, one worker, 80 requests of 20
// generated photos (JPEG and PNG, 0.27 to 0.57 MP, like the dev set's) at concurrency 8, preview and
// full mixed. Every request is answered with a 200, the credits the headers announced are exactly the
// ledger's delta (under piscina#1031 one request never came back).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runSoak } from '../harness/soak-driver.js';
import { syntheticFigure, syntheticPhoto } from '../helpers/core-fixtures.js';

/** 20 photo files in `dir`: sizes from 640x427 to 925x617, a figure or a disc, JPEG or PNG. */
async function photosIn(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (let i = 0; i < 20; i++) {
    const [w, h] = [640 + 15 * i, Math.round((640 + 15 * i) * (2 / 3))];
    const format = i % 2 ? 'png' : 'jpeg';
    const file = path.join(dir, `photo-${i}.${format === 'png' ? 'png' : 'jpg'}`);
    fs.writeFileSync(file, i % 4 < 2 ? await syntheticFigure(w, h, format) : await syntheticPhoto(w, h, format));
    files.push(file);
  }
  return files;
}

t.test('80 requests at concurrency 8 on one worker', async (t) => {
  const photos = await photosIn(t.testdir());
  const r = await runSoak({
    requests: 80,
    concurrency: 8,
    photos,
    sizes: ['preview', 'full'],
    workers: 1,
    model: 'isnet-int8',
    clientTimeoutMs: 600_000,
    settleIdle: false,
  });

  t.equal(r.answered, 80, 'every request answered');
  t.equal(r.unanswered, 0);
  t.same(r.statuses, { 200: 80 }, `only 200s (non-200: ${JSON.stringify(r.non200.slice(0, 3))})`);
  t.equal(r.credits.fromHeaders, 80, 'one credit per photo');
  t.equal(r.credits.ledgerDelta, 80, 'the ledger moved by exactly what the headers said');

  t.equal(r.queueWaitMs.reported, 80, 'every answer reported its queue wait (Server-Timing)');
  // Arrival order under a steady stream is proven without clocks in test/unit/fifo-queue.test.ts;
  // how long the slowest request waited is bench:soak's to report, not a test's to time.
  t.ok(r.rssMb.idle > 0 && r.rssMb.hwm >= r.rssMb.idle, `RSS sampled (idle ${r.rssMb.idle} MB, peak ${r.rssMb.hwm} MB)`);
});
