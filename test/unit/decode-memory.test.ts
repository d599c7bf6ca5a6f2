// The process's decode memory: a decode that would pass the ceiling waits for a release, one alone always goes, a slot is freed whatever its worker did, and the counter is shared across threads.
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { DecodeMemory } from '../../src/process/decode-memory.js';

const MB = 1024 * 1024;

/** Whether `p` has settled once the microtasks and one macrotask turn have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

t.test('decodes within the ceiling go at once; one that would pass it waits for a release', async (t) => {
  const mem = DecodeMemory.create(3, 100 * MB);
  await mem.acquire(0, 60 * MB);
  await mem.acquire(1, 30 * MB);
  t.equal(mem.heldBytes(), 90 * MB);
  const third = mem.acquire(2, 20 * MB);
  t.equal(await settled(third), false, 'waits: 90 + 20 MB is over 100 MB');
  mem.release(1);
  t.equal(await settled(third), true, 'goes once 30 MB came back');
  t.equal(mem.heldBytes(), 80 * MB);
  mem.release(0);
  mem.release(2);
  mem.release(2); // nothing held: nothing happens
  t.equal(mem.heldBytes(), 0);
});

t.test('a decode over the ceiling waits for an idle process, then goes alone', async (t) => {
  const mem = DecodeMemory.create(2, 100 * MB);
  await mem.acquire(0, 10 * MB);
  const big = mem.acquire(1, 300 * MB);
  t.equal(await settled(big), false);
  mem.release(0);
  t.equal(await settled(big), true);
  t.equal(mem.heldBytes(), 300 * MB);
});

t.test('slots: the main thread hands one per running task and frees it whatever the worker did', async (t) => {
  const mem = DecodeMemory.create(2, 100 * MB);
  const a = mem.claimSlot();
  const b = mem.claimSlot();
  t.not(a, b);
  t.throws(() => mem.claimSlot(), /Expected a free decode-memory slot/);
  await mem.acquire(a, 70 * MB); // its worker then dies without releasing
  mem.returnSlot(a);
  t.equal(mem.heldBytes(), 0, 'what the dead worker held is back');
  t.equal(mem.claimSlot(), a, 'and its slot can be used again');
  mem.returnSlot(b);
});

t.test('shared across threads: a worker waits until the main thread releases', async (t) => {
  const mem = DecodeMemory.create(2, 100 * MB);
  await mem.acquire(0, 80 * MB);
  const url = new URL('../../src/process/decode-memory.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     // Atomics.waitAsync does not keep a thread's event loop alive; a Piscina worker's port does.
     parentPort.on('message', () => {});
     import(workerData.url).then(async ({ DecodeMemory }) => {
       const mem = new DecodeMemory(workerData.share);
       parentPort.postMessage('waiting');
       await mem.acquire(1, 50 * 1024 * 1024);
       parentPort.postMessage('acquired');
     });`,
    { eval: true, workerData: { url, share: mem.share } },
  );
  t.teardown(() => worker.terminate());
  const messages: string[] = [];
  const next = () => new Promise<string>((resolve) => worker.once('message', (m: string) => resolve(m)));
  messages.push(await next());
  const acquired = next();
  t.equal(await settled(acquired), false, 'the worker waits while 80 MB are held');
  mem.release(0);
  messages.push(await acquired);
  t.same(messages, ['waiting', 'acquired']);
  t.equal(mem.heldBytes(), 50 * MB, 'its 50 MB show in the main thread');
});
