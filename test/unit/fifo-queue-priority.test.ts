// pool/fifo-queue.ts priorities: low tasks (the sandbox's) wait behind every normal task, hold at
// most `maxLow` places (running + waiting) and are not counted against `maxQueue`; each class stays
// strictly FIFO, and an abort drops a waiting low task and gives its place back. Tasks are finished
// by hand (deferreds), never by sleeping.
import t from 'tap';
import { FifoQueue, type Priority } from '../../src/pool/fifo-queue.js';

interface Job {
  id: string;
  done(): void;
}

function harness(concurrency: number, opts: { maxQueue?: number; maxLow?: number } = {}) {
  const started: Job[] = [];
  const q = new FifoQueue<string, string>((id) => new Promise<string>((resolve) => started.push({ id, done: () => resolve(id) })), {
    concurrency,
    maxQueue: opts.maxQueue ?? Number.POSITIVE_INFINITY,
    ...(opts.maxLow !== undefined && { maxLow: opts.maxLow }),
  });
  return { q, started };
}

const settle = () => new Promise<void>((r) => setImmediate(r));
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: { code?: string }) => e.code ?? 'no code',
  );

/** Finish the running tasks one by one from `from` on; the ids of the tasks started from there, in order. */
async function drain(started: Job[], total: number, from = 0): Promise<string[]> {
  for (let i = from; i < from + total; i++) {
    await settle();
    started[i]!.done();
  }
  await settle();
  return started.slice(from).map((j) => j.id);
}

t.test('normal tasks overtake waiting low ones; each class keeps its own arrival order', async (t) => {
  const { q, started } = harness(1);
  const order: Array<[string, Priority]> = [
    ['L1', 'low'], // starts at once: the worker is free
    ['L2', 'low'],
    ['N1', 'normal'],
    ['L3', 'low'],
    ['N2', 'normal'],
    ['U1', 'urgent'],
    ['N3', 'normal'],
  ];
  const all = order.map(([id, p]) => q.run(id, undefined, undefined, p));
  const got = await drain(started, order.length);
  await Promise.all(all);
  t.same(got, ['L1', 'U1', 'N1', 'N2', 'N3', 'L2', 'L3'], 'urgent, then normal, then low, FIFO within each');
});

t.test('maxLow bounds low places, running and waiting; normal work is not refused for them', async (t) => {
  const { q, started } = harness(1, { maxQueue: 2, maxLow: 2 });
  const l1 = q.run('L1', undefined, undefined, 'low'); // runs
  const l2 = q.run('L2', undefined, undefined, 'low'); // waits
  t.equal(await codeOf(q.run('L3', undefined, undefined, 'low')), 'share_full', 'a third low task is refused');
  // Two normal tasks fit beside the two low ones: low tasks do not use up maxQueue.
  const n1 = q.run('N1');
  const n2 = q.run('N2');
  t.equal(await codeOf(q.run('N3')), 'queue_full', 'maxQueue still bounds the normal class');
  t.same(q.stats().queued, 3);
  await settle();
  started[0]!.done(); // L1 ends: its place is free again, and N1 (not L2) starts
  await l1;
  await settle();
  t.equal(started[1]!.id, 'N1');
  const l3 = q.run('L3', undefined, undefined, 'low');
  t.equal(await codeOf(q.run('L4', undefined, undefined, 'low')), 'share_full', 'L2 waiting + L3 waiting = the share');
  const rest = await drain(started, 4, 1);
  t.same(rest, ['N1', 'N2', 'L2', 'L3']);
  await Promise.all([n1, n2, l2, l3]);
});

t.test('a waiting low task whose caller left is dropped and gives its place back', async (t) => {
  const { q, started } = harness(1, { maxLow: 1 });
  const n1 = q.run('N1');
  const ac = new AbortController();
  const l1 = codeOf(q.run('L1', ac.signal, undefined, 'low'));
  t.equal(await codeOf(q.run('L2', undefined, undefined, 'low')), 'share_full');
  ac.abort();
  t.equal(await l1, 'aborted');
  t.equal(q.stats().dropped, 1);
  const l2 = q.run('L2', undefined, undefined, 'low');
  const got = await drain(started, 2);
  await Promise.all([n1, l2]);
  t.same(got, ['N1', 'L2'], 'the dropped task never ran');
});

t.test('a running low task keeps its place until it really ends, even after its caller left', async (t) => {
  const { q, started } = harness(1, { maxLow: 1 });
  const ac = new AbortController();
  const l1 = codeOf(q.run('L1', ac.signal, undefined, 'low'));
  await settle();
  ac.abort();
  t.equal(await l1, 'aborted', 'the caller is answered at once');
  t.equal(await codeOf(q.run('L2', undefined, undefined, 'low')), 'share_full', 'the work still runs');
  started[0]!.done();
  await q.whenIdle();
  const l2 = q.run('L2', undefined, undefined, 'low');
  await settle();
  started[1]!.done();
  t.equal(await l2, 'L2');
});

t.test('close refuses waiting low tasks and resets the share', async (t) => {
  const { q, started } = harness(1, { maxLow: 2 });
  const l1 = q.run('L1', undefined, undefined, 'low');
  const l2 = codeOf(q.run('L2', undefined, undefined, 'low'));
  const closed = q.close();
  t.equal(await l2, 'pool_closed');
  await settle();
  started[0]!.done();
  t.equal(await l1, 'L1');
  await closed;
});

t.test('maxLow is checked', async (t) => {
  t.throws(() => new FifoQueue<string, string>(async (x) => x, { concurrency: 1, maxQueue: 1, maxLow: -1 }), /Expected maxLow >= 0 but received -1/);
  const q = new FifoQueue<string, string>(async (x) => x, { concurrency: 1, maxQueue: 1, maxLow: 0 });
  t.equal(await codeOf(q.run('L', undefined, undefined, 'low')), 'share_full', 'a share of 0 refuses every low task');
  t.equal(await q.run('N'), 'N');
});
