// pool/fifo-queue.ts: strict arrival order, bounded, abort drops a waiting task, a running one keeps
// its slot until it really ends. Tasks are finished by hand (deferreds), never by sleeping.
import t from 'tap';
import { FifoQueue } from '../../src/pool/fifo-queue.js';

interface Job {
  id: number;
  done(value?: string): void;
  fail(err: Error): void;
}

/** A queue whose executor parks every task until the test finishes it. */
function harness(concurrency: number, maxQueue = Number.POSITIVE_INFINITY) {
  const started: Job[] = [];
  const waits: number[] = [];
  const q = new FifoQueue<number, string>(
    (id, waitMs) =>
      new Promise<string>((resolve, reject) => {
        waits.push(waitMs);
        started.push({ id, done: (v) => resolve(v ?? `r${id}`), fail: reject });
      }),
    { concurrency, maxQueue },
  );
  return { q, started, waits };
}

const settle = () => new Promise<void>((r) => setImmediate(r));
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: { code?: string }) => e.code ?? 'no code',
  );

t.test('20 tasks on one worker start and finish in submission order', async (t) => {
  const { q, started } = harness(1);
  const finished: number[] = [];
  const all = Array.from({ length: 20 }, (_, i) => q.run(i).then((r) => finished.push(Number(r.slice(1)))));
  for (let i = 0; i < 20; i++) {
    await settle();
    t.equal(started.length, i + 1, `only one runs at a time (${i})`);
    started[i]!.done();
  }
  await Promise.all(all);
  t.same(
    started.map((j) => j.id),
    [...Array(20).keys()],
  );
  t.same(finished, [...Array(20).keys()]);
  t.same(q.stats(), { running: 0, queued: 0, longestWaitMs: q.stats().longestWaitMs, started: 20, batches: 20, dropped: 0 });
});

t.test('steady stream: nobody is overtaken, so no task waits longer than the work ahead of it', async (t) => {
  // Two workers, a new arrival after every completion (the pattern that starved a task in
  // piscina#1031), 300 tasks. Each task must start after exactly the tasks that arrived before it.
  const { q, started } = harness(2);
  const startedBefore = new Map<number, number>();
  let next = 0;
  const submit = () => {
    const id = next++;
    void q.run(id, undefined, { onStart: () => startedBefore.set(id, q.stats().started - 1) });
  };
  for (let i = 0; i < 6; i++) submit();
  for (let k = 0; k < 300; k++) {
    await settle();
    // Finish the oldest running task, then let a newcomer arrive while the others wait.
    const running = started.filter((j) => !(j as Job & { ended?: boolean }).ended);
    const job = running[0]!;
    (job as Job & { ended?: boolean }).ended = true;
    job.done();
    if (next < 300) submit();
  }
  await settle();
  t.same(
    started.map((j) => j.id),
    [...Array(started.length).keys()],
    'start order = arrival order',
  );
  t.ok(started.length >= 290, `ran ${started.length}`);
  // Tasks started before each one = the tasks that arrived before it, never more.
  const overtaken = [...startedBefore].filter(([id, before]) => before !== id);
  t.same(overtaken, [], 'no task was overtaken');
});

t.test('a waiting task whose caller left never runs', async (t) => {
  const { q, started } = harness(1);
  const first = q.run(1);
  const ac = new AbortController();
  const second = q.run(2, ac.signal);
  const third = q.run(3);
  await settle();
  ac.abort();
  t.equal(await codeOf(second), 'aborted');
  t.same(q.stats().queued, 1);
  t.equal(q.stats().dropped, 1);
  started[0]!.done();
  t.equal(await first, 'r1');
  await settle();
  t.same(
    started.map((j) => j.id),
    [1, 3],
    'task 2 was skipped',
  );
  started[1]!.done();
  t.equal(await third, 'r3');
});

t.test('a running task whose caller left: the caller is answered at once, the slot stays taken until it ends', async (t) => {
  const { q, started } = harness(1);
  const ac = new AbortController();
  const first = q.run(1, ac.signal);
  const second = q.run(2);
  await settle();
  ac.abort();
  t.equal(await codeOf(first), 'aborted', 'rejected without waiting for the work');
  await settle();
  t.equal(started.length, 1, 'the next task waits for the worker, not for the caller');
  t.equal(q.stats().running, 1);
  started[0]!.done('late'); // its result goes nowhere
  await settle();
  t.equal(started.length, 2);
  started[1]!.done();
  t.equal(await second, 'r2');
});

t.test('bounded: queue_full beyond maxQueue waiting tasks; 0 means no waiting at all', async (t) => {
  const { q, started } = harness(1, 2);
  const a = q.run(1);
  const b = q.run(2);
  const c = q.run(3);
  t.equal(await codeOf(q.run(4)), 'queue_full');
  t.same({ running: q.stats().running, queued: q.stats().queued }, { running: 1, queued: 2 });
  for (let i = 0; i < 3; i++) {
    await settle();
    started[i]!.done();
  }
  t.same(await Promise.all([a, b, c]), ['r1', 'r2', 'r3']);

  const z = harness(1, 0);
  const only = z.q.run(1);
  t.equal(await codeOf(z.q.run(2)), 'queue_full');
  await settle();
  z.started[0]!.done();
  t.equal(await only, 'r1');
});

t.test('an already aborted signal is refused before queueing', async (t) => {
  const { q, started } = harness(1);
  t.equal(await codeOf(q.run(1, AbortSignal.abort())), 'aborted');
  await settle();
  t.equal(started.length, 0);
});

t.test('failures free the slot: a rejecting task and a throwing executor', async (t) => {
  const { q, started } = harness(1);
  const bad = q.run(1);
  const good = q.run(2);
  await settle();
  started[0]!.fail(Object.assign(new Error('boom'), { code: 'worker_failed' }));
  t.equal(await codeOf(bad), 'worker_failed');
  await settle();
  started[1]!.done();
  t.equal(await good, 'r2');

  const throwing = new FifoQueue<number, number>(
    () => {
      throw new Error('sync');
    },
    { concurrency: 1, maxQueue: 4 },
  );
  await t.rejects(throwing.run(1), { message: 'sync' });
  await t.rejects(throwing.run(2), { message: 'sync' });
  t.equal(throwing.stats().running, 0);
});

t.test('close: waiting tasks are refused, running ones finish, then it resolves', async (t) => {
  const { q, started } = harness(1);
  const running = q.run(1);
  const waiting = q.run(2);
  await settle();
  let closed = false;
  const closing = q.close().then(() => (closed = true));
  t.equal(await codeOf(waiting), 'pool_closed');
  t.equal(await codeOf(q.run(3)), 'pool_closed');
  await settle();
  t.equal(closed, false, 'still draining');
  started[0]!.done();
  t.equal(await running, 'r1');
  await closing;
  t.equal(closed, true);
});

t.test('options are checked', async (t) => {
  t.throws(() => new FifoQueue(async () => 0, { concurrency: 0, maxQueue: 1 }), RangeError);
  t.throws(() => new FifoQueue(async () => 0, { concurrency: 1, maxQueue: -1 }), RangeError);
});
