// The CPU worker's collection after an answer (src/worker/after-answer-collection.ts): it runs after
// the answer, and a task that arrives meanwhile waits until it has run and the photo's memory is freed.
import t from 'tap';
import sharp from 'sharp';
import { AfterAnswerCollection } from '../../src/worker/after-answer-collection.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A collector that logs its start and end, ending a turn later as the real one does. */
function logged(events: string[]): () => Promise<void> {
  let n = 0;
  return async () => {
    const i = ++n;
    events.push(`collect ${i}`);
    await turn();
    events.push(`freed ${i}`);
  };
}

t.test('the collection waits for a later turn: the answer goes first', async (t) => {
  const events: string[] = [];
  const c = new AfterAnswerCollection(logged(events));
  c.schedule();
  await Promise.resolve();
  t.same(events, [], 'nothing collected in the turn that scheduled it');
  await c.done();
  t.same(events, ['collect 1', 'freed 1'], 'done() resolves once the collection has freed its memory');
});

t.test('a task that arrives meanwhile waits; one that arrives after goes at once', async (t) => {
  const events: string[] = [];
  const c = new AfterAnswerCollection(logged(events));
  c.schedule();
  const order: string[] = [];
  setImmediate(() => order.push('next turn'));
  await c.done();
  order.push('task');
  t.same(order, ['next turn', 'task'], 'the task waited turns of the event loop for the collection');
  t.same(events, ['collect 1', 'freed 1']);

  const later: string[] = [];
  setImmediate(() => later.push('next turn'));
  await c.done();
  later.push('task');
  t.same(later, ['task'], 'nothing pending: done() does not wait for a turn');
});

t.test('two answers in a row: done() waits for the last collection', async (t) => {
  const events: string[] = [];
  const c = new AfterAnswerCollection(logged(events));
  c.schedule();
  c.schedule();
  await c.done();
  t.same(events.slice(-1), ['freed 2'], 'the second collection has finished');
  t.equal(events.filter((e) => e.startsWith('freed')).length, 2, 'both collections ran');
});

/** A task's work on a 64 MB photo from sharp (an external Buffer, freed by its finalizer): RSS while it held the photo. */
async function photoTask(t: { equal: (a: unknown, b: unknown) => void }, bytes: number): Promise<number> {
  const photo = await sharp({ create: { width: 4000, height: 4000, channels: 4, background: '#808080' } })
    .raw()
    .toBuffer();
  t.equal(photo.length, bytes);
  photo.fill(7); // resident, every page
  return process.memoryUsage().rss;
}

t.test('the real collection frees the last photo before done() resolves, every time', async (t) => {
  const c = new AfterAnswerCollection();
  const bytes = 4000 * 4000 * 4;
  // V8 frees dead ArrayBuffers on a helper thread unless told not to (src/process/collect-garbage.ts):
  // then about one collection in 25 had not freed the photo yet, so two dozen tasks in a row.
  const late: string[] = [];
  for (let i = 0; i < 24; i++) {
    const before = process.memoryUsage().rss;
    const holding = await photoTask(t, bytes);
    if (i === 0) t.ok(holding - before > bytes * 0.75, `the photo is resident: RSS ${mb(before)} → ${mb(holding)} MB`);
    // The answer has gone: as the worker does.
    c.schedule();
    await c.done();
    const after = process.memoryUsage().rss;
    if (holding - after < bytes * 0.75) late.push(`task ${i}: RSS ${mb(holding)} → ${mb(after)} MB`);
  }
  t.same(late, [], 'each photo freed once done() resolved');
});

function mb(n: number): string {
  return (n / 1e6).toFixed(0);
}
