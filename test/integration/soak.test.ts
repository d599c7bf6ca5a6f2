// A CI-sized soak (bench:soak's driver): one real server process, one worker, 80 requests of real
// photos at concurrency 8, preview and full mixed. Every request is answered with a 200, the credits
// the headers announced are exactly the ledger's delta (under piscina#1031 one request never came back).
import t from 'tap';
import { runSoak } from '../../bench/soak-driver.js';
import { evalPhotos } from '../helpers/images.js';

t.test('80 requests at concurrency 8 on one worker', async (t) => {
  const photos = evalPhotos(20);
  t.ok(photos.length >= 10, `real photos found (${photos.length}) in ../shared/eval/dev`);
  if (photos.length === 0) return;
  const r = await runSoak({ requests: 80, concurrency: 8, photos, sizes: ['preview', 'full'], workers: 1, model: 'isnet-int8', clientTimeoutMs: 600_000, settleIdle: false });

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
