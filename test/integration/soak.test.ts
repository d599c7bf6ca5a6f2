// A CI-sized soak (bench:soak's driver): one real server process, one worker, 80 requests of real
// photos at concurrency 8, preview and full mixed. Every request is answered with a 200, the credits
// the headers announced are exactly the ledger's delta, and no request waited in the queue longer
// than the work ahead of it needs (at most 7 others can be ahead: piscina#1031 let one wait for ever).
import t from 'tap';
import { runSoak } from '../../bench/soak-driver.js';
import { evalPhotos } from '../helpers/images.js';

t.test('80 requests at concurrency 8 on one worker', async (t) => {
  const photos = evalPhotos(20);
  t.ok(photos.length >= 10, `real photos found (${photos.length}) in ../shared/eval/dev`);
  if (photos.length === 0) return;
  const r = await runSoak({ requests: 80, concurrency: 8, photos, sizes: ['preview', 'full'], workers: 1, model: 'isnet-int8', clientTimeoutMs: 600_000 });

  t.equal(r.answered, 80, 'every request answered');
  t.equal(r.unanswered, 0);
  t.same(r.statuses, { 200: 80 }, `only 200s (non-200: ${JSON.stringify(r.non200.slice(0, 3))})`);
  t.equal(r.credits.fromHeaders, 80, 'one credit per photo');
  t.equal(r.credits.ledgerDelta, 80, 'the ledger moved by exactly what the headers said');

  // Place in line: a request waits for at most the 7 others ahead of it (the client keeps 8 in
  // flight), each taking at most the slowest service time seen. Relative to this machine's speed.
  t.equal(r.queueWaitMs.reported, 80, 'every answer reported its queue wait (Server-Timing)');
  const maxService = r.serviceMs.max;
  t.ok(
    r.queueWaitMs.max <= 7 * maxService + 500,
    `longest queue wait ${r.queueWaitMs.max} ms <= 7 × slowest service ${maxService} ms (+0.5 s)`,
  );
  t.ok(r.rssMb.idle > 0 && r.rssMb.hwm >= r.rssMb.idle, `RSS sampled (idle ${r.rssMb.idle} MB, peak ${r.rssMb.hwm} MB)`);
});
