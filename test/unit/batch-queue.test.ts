// pool/fifo-queue.ts in batching mode (the cross-request batcher a GPU session takes batches from):
// arrival order within and across batches, the fill-or-wait bound, per-request abort, one bad input
// among good ones, a whole-batch failure retried task by task, shutdown with batches in flight.
import t from 'tap';
import { FifoQueue } from '../../src/pool/fifo-queue.js';

interface Batch {
  ids: number[];
  waits: readonly number[];
  /** Settle each task: a string result, or an Error for that one task. */
  finish(results?: Array<string | Error>): void;
  /** Reject the whole call. */
  crash(err: Error): void;
}

function harness(opts: { maxBatch: number; maxWaitMs: number; concurrency?: number; maxQueue?: number; companyExpected?: () => boolean }) {
  const batches: Batch[] = [];
  let arrived: (() => void) | undefined;
  const q = new FifoQueue<number, string>(
    (ids, waits) =>
      new Promise((resolve, reject) => {
        batches.push({
          ids: [...ids],
          waits,
          finish: (results) =>
            resolve(
              ids.map((id, i): PromiseSettledResult<string> => {
                const r = results?.[i] ?? `r${id}`;
                return r instanceof Error ? { status: 'rejected', reason: r } : { status: 'fulfilled', value: r };
              }),
            ),
          crash: reject,
        });
        arrived?.();
      }),
    {
      concurrency: opts.concurrency ?? 1,
      maxQueue: opts.maxQueue ?? 1000,
      maxBatch: opts.maxBatch,
      maxWaitMs: opts.maxWaitMs,
      ...(opts.companyExpected && { companyExpected: opts.companyExpected }),
    },
    'batched',
  );
  /** Resolves when the executor has been called `n` times in all. */
  const batchCount = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (batches.length >= n ? resolve() : (arrived = check));
      check();
    });
  return { q, batches, batchCount };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: { code?: string; message?: string }) => e.code ?? e.message ?? 'no code',
  );
const NEVER = 60_000; // a wait bound the tests never reach: batches leave only when full

t.test('a full batch leaves at once; batches and tasks keep arrival order', async (t) => {
  const { q, batches, batchCount } = harness({ maxBatch: 4, maxWaitMs: NEVER });
  const results = Array.from({ length: 12 }, (_, i) => q.run(i));
  await batchCount(1);
  t.same(batches[0]!.ids, [0, 1, 2, 3], 'first batch: the four oldest');
  t.equal(q.stats().queued, 8);
  batches[0]!.finish();
  await batchCount(2);
  t.same(batches[1]!.ids, [4, 5, 6, 7]);
  batches[1]!.finish();
  await batchCount(3);
  t.same(batches[2]!.ids, [8, 9, 10, 11]);
  batches[2]!.finish();
  t.same(
    await Promise.all(results),
    Array.from({ length: 12 }, (_, i) => `r${i}`),
    'each gets its own result',
  );
  t.equal(q.stats().batches, 3);
});

t.test('the time bound: a lone task waits for company at most maxWaitMs, then runs alone', async (t) => {
  const { q, batches, batchCount } = harness({ maxBatch: 8, maxWaitMs: 30 });
  const r = q.run(1);
  await batchCount(1);
  t.same(batches[0]!.ids, [1]);
  t.ok(batches[0]!.waits[0]! >= 28, `it waited for the batch window (${batches[0]!.waits[0]} ms)`);
  batches[0]!.finish();
  t.equal(await r, 'r1');
});

t.test('no company expected: a lone task leaves at once; company expected: it waits the window', async (t) => {
  let coming = false;
  const { q, batches, batchCount } = harness({ maxBatch: 8, maxWaitMs: NEVER, companyExpected: () => coming });
  const lone = q.run(1);
  await batchCount(1);
  t.same(batches[0]!.ids, [1], 'nothing on its way: the batch of one left without waiting');
  t.ok(batches[0]!.waits[0]! < 1000, `waited ${batches[0]!.waits[0]} ms, not the ${NEVER} ms window`);
  batches[0]!.finish();
  t.equal(await lone, 'r1');

  coming = true;
  const a = q.run(2);
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.equal(batches.length, 1, 'company on its way: the task waits for it');
  const b = q.run(3);
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.equal(batches.length, 1, 'still waiting: the batch is not full and more may come');
  coming = false;
  const c = q.run(4); // the last one: the queue asks again as it arrives
  await batchCount(2);
  t.same(batches[1]!.ids, [2, 3, 4], 'the three went together once nothing more was coming');
  batches[1]!.finish();
  t.same(await Promise.all([a, b, c]), ['r2', 'r3', 'r4']);
});

t.test('one bad input among good ones fails only its own request', async (t) => {
  const { q, batches, batchCount } = harness({ maxBatch: 3, maxWaitMs: NEVER });
  const rs = [q.run(1), q.run(2), q.run(3)];
  await batchCount(1);
  batches[0]!.finish(['ok1', new Error('bad image'), 'ok3']);
  t.same(await Promise.all(rs.map(codeOf)), ['resolved', 'bad image', 'resolved']);
  t.equal(await rs[0], 'ok1');
  t.equal(await rs[2], 'ok3');
});

t.test('a batch that fails as a whole is run again task by task, so one poison input fails alone', async (t) => {
  const { q, batches, batchCount } = harness({ maxBatch: 3, maxWaitMs: NEVER });
  const later = [q.run(1), q.run(2), q.run(3)];
  await batchCount(1);
  const newcomers = [q.run(4), q.run(5), q.run(6)]; // arrive while the batch runs: must not overtake the retries
  batches[0]!.crash(new Error('CUDA out of memory'));
  for (const [n, id] of [
    [2, 1],
    [3, 2],
    [4, 3],
  ] as const) {
    await batchCount(n);
    t.same(batches[n - 1]!.ids, [id], `task ${id} retried alone, in order`);
    if (id === 2) batches[n - 1]!.crash(new Error('poison'));
    else batches[n - 1]!.finish();
  }
  t.same(await Promise.all(later.map(codeOf)), ['resolved', 'poison', 'resolved']);
  await batchCount(5);
  t.same(batches[4]!.ids, [4, 5, 6], 'then the newcomers, batched again');
  batches[4]!.finish();
  t.same(await Promise.all(newcomers), ['r4', 'r5', 'r6']);
});

t.test('per-request abort: a waiting one leaves its batch-to-be, a running one is answered at once', async (t) => {
  const { q, batches, batchCount } = harness({ maxBatch: 3, maxWaitMs: NEVER });
  const a = new AbortController();
  const b = new AbortController();
  const r1 = q.run(1, a.signal);
  const r2 = q.run(2);
  a.abort(); // still waiting for the batch to fill
  t.equal(await codeOf(r1), 'aborted');
  t.equal(q.stats().dropped, 1);
  const r3 = q.run(3, b.signal);
  const r4 = q.run(4);
  await batchCount(1);
  t.same(batches[0]!.ids, [2, 3, 4], 'the dropped task never joined a batch');
  b.abort(); // inside the running batch
  t.equal(await codeOf(r3), 'aborted', 'answered without waiting for the batch');
  t.equal(q.stats().running, 3, 'the batch still runs whole');
  batches[0]!.finish();
  t.same([await r2, await r4], ['r2', 'r4'], 'its neighbours are neither failed nor delayed');
});

t.test('several batches in flight, bounded queue', async (t) => {
  const { q, batches, batchCount } = harness({ maxBatch: 2, maxWaitMs: NEVER, concurrency: 2, maxQueue: 4 });
  const rs = [1, 2, 3, 4].map((i) => q.run(i));
  await batchCount(2);
  t.same(
    batches.map((b) => b.ids),
    [
      [1, 2],
      [3, 4],
    ],
  );
  const more = [5, 6, 7, 8].map((i) => q.run(i));
  t.equal(await codeOf(q.run(9)), 'queue_full', 'four waiting is the limit');
  batches[1]!.finish();
  await batchCount(3);
  t.same(batches[2]!.ids, [5, 6]);
  batches[0]!.finish();
  await batchCount(4);
  t.same(batches[3]!.ids, [7, 8]);
  batches[2]!.finish();
  batches[3]!.finish();
  t.same(
    await Promise.all([...rs, ...more]),
    [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `r${i}`),
  );
});

t.test('shutdown with a batch in flight: waiting tasks refused, the running batch delivered, then closed', async (t) => {
  const { q, batches, batchCount } = harness({ maxBatch: 2, maxWaitMs: NEVER });
  const running = [q.run(1), q.run(2)];
  await batchCount(1);
  const waiting = q.run(3);
  let closed = false;
  const closing = q.close().then(() => (closed = true));
  t.equal(await codeOf(waiting), 'pool_closed');
  t.equal(await codeOf(q.run(4)), 'pool_closed');
  t.equal(closed, false);
  batches[0]!.finish();
  t.same(await Promise.all(running), ['r1', 'r2']);
  await closing;
  t.equal(closed, true);
  t.equal(batches.length, 1, 'nothing started after close');
});

t.test('batch options are checked; a single-task executor takes no batches', async (t) => {
  const batch = async () => [];
  t.throws(() => new FifoQueue(batch, { concurrency: 1, maxQueue: 1, maxBatch: 0 }, 'batched'), RangeError);
  t.throws(() => new FifoQueue(batch, { concurrency: 1, maxQueue: 1, maxBatch: 1.5 }, 'batched'), RangeError);
  t.throws(() => new FifoQueue(batch, { concurrency: 1, maxQueue: 1, maxWaitMs: -1 }, 'batched'), RangeError);
  t.throws(() => new FifoQueue(async () => 0, { concurrency: 1, maxQueue: 1, maxBatch: 2 } as never), /single-task executor/);
});

t.test("urgent tasks (a request's second half) wait ahead of new work, in their own order, and are never refused", async (t) => {
  const order: number[] = [];
  const gates: Array<() => void> = [];
  const q = new FifoQueue<number, number>(
    (id) =>
      new Promise((resolve) => {
        order.push(id);
        gates.push(() => resolve(id));
      }),
    { concurrency: 1, maxQueue: 2 },
  );
  const first = q.run(1);
  const normal = [q.run(2), q.run(3)];
  t.equal(await codeOf(q.run(4)), 'queue_full', 'normal work is bounded');
  const urgent = [q.run(10, undefined, undefined, 'urgent'), q.run(11, undefined, undefined, 'urgent')];
  t.equal(q.stats().queued, 4, 'urgent work is admitted past the bound');
  while (order.length < 5) {
    await new Promise((resolve) => setImmediate(resolve));
    gates.shift()?.();
  }
  gates.shift()?.();
  t.same(await Promise.all([first, ...normal, ...urgent]), [1, 2, 3, 10, 11]);
  t.same(order, [1, 10, 11, 2, 3], 'the urgent ones ran next, oldest first, then the normal ones');
});
