// startPiscina resolves only once every worker has loaded (its module evaluated), however unevenly
// they start: each of the N concurrent pings goes to a worker of its own, so a fast worker answering
// twice cannot stand in for a slow one.
import t from 'tap';
import { startPiscina } from '../../src/pool/start-piscina.js';

t.test('every worker has loaded when the pool is handed out, the slow ones too', async (t) => {
  const threads = 4;
  const shared = new Int32Array(new SharedArrayBuffer(8));
  // One worker fast, the others up to ~1.5 s slower: a ping answered by the fast one twice would
  // resolve the start long before the slow ones load.
  const piscina = await startPiscina({
    filename: '../../test/helpers/slow-start-worker.js',
    threads,
    workerData: { loaded: shared, delays: [0, 500, 1000, 1500] },
  });
  t.teardown(() => piscina.destroy());
  t.equal(Atomics.load(shared, 0), threads, 'all four workers loaded when startPiscina resolved');
  t.equal(piscina.threads.length, threads);
  const ids = await Promise.all(Array.from({ length: threads }, () => piscina.run(null, { name: 'ping' }) as Promise<{ threadId: number }>));
  t.same(new Set(ids.map((r) => r.threadId)).size, threads, 'four concurrent pings, four workers');
});
