// fetch/fetch-gate.ts: download places refused when full; DNS look-ups time out, wait in order, and keep their place until they return.
import t from 'tap';
import { FetchBusyError, FetchGate, LookupTimeoutError, defaultMaxLookups } from '../../src/fetch/fetch-gate.js';

/** A look-up that answers only when told to. */
function heldLookup() {
  let answer!: (v: string) => void;
  const promise = new Promise<string>((r) => (answer = r));
  return { run: () => promise, answer };
}

t.test('download places: the one past maxFetches is refused; leaving frees a place (once)', async (t) => {
  const gate = new FetchGate({ maxFetches: 2, maxLookups: 1 });
  const a = gate.enter();
  const b = gate.enter();
  t.throws(() => gate.enter(), FetchBusyError);
  a();
  a();
  t.equal(gate.inUse.fetches, 1, 'idempotent leave');
  const c = gate.enter();
  b();
  c();
  t.equal(gate.inUse.fetches, 0);
});

t.test('a look-up past its time is LookupTimeoutError and keeps its place until it returns', async (t) => {
  const gate = new FetchGate({ maxFetches: 4, maxLookups: 1 });
  const hung = heldLookup();
  await t.rejects(
    gate.lookup('slow.example', hung.run, 20),
    new LookupTimeoutError("Could not resolve host 'slow.example': the DNS look-up timed out after 20 ms"),
  );
  t.equal(gate.inUse.lookups, 1, 'abandoned, still on the thread pool');
  // The only place is taken: the next caller waits, and past its time it is told the gate was busy.
  await t.rejects(
    gate.lookup('next.example', async () => 'x', 20),
    FetchBusyError,
  );
  t.same(gate.inUse, { fetches: 0, lookups: 1, waitingLookups: 0 }, 'the waiter left the queue');
  hung.answer('late');
  await hung.run();
  await new Promise<void>((r) => setImmediate(r));
  t.equal(gate.inUse.lookups, 0, 'place freed when getaddrinfo returned');
  t.equal(await gate.lookup('next.example', async () => 'ok', 1000), 'ok');
});

t.test('waiters are served in order as places free up', async (t) => {
  const gate = new FetchGate({ maxFetches: 4, maxLookups: 1 });
  const first = heldLookup();
  const order: string[] = [];
  const p1 = gate.lookup('a', first.run, 5000).then((v) => order.push(v));
  const p2 = gate.lookup('b', async () => 'b', 5000).then((v) => order.push(v));
  const p3 = gate.lookup('c', async () => 'c', 5000).then((v) => order.push(v));
  t.equal(gate.inUse.waitingLookups, 2);
  first.answer('a');
  await Promise.all([p1, p2, p3]);
  t.same(order, ['a', 'b', 'c']);
  t.same(gate.inUse, { fetches: 0, lookups: 0, waitingLookups: 0 });
});

t.test('the client leaving stops the wait with its reason; a failing look-up frees its place', async (t) => {
  const gate = new FetchGate({ maxFetches: 4, maxLookups: 1 });
  const ac = new AbortController();
  const hung = heldLookup();
  const waiting = gate.lookup('a', hung.run, 5000, ac.signal);
  ac.abort(new Error('client gone'));
  await t.rejects(waiting, /client gone/);
  hung.answer('x');
  await hung.run();
  await new Promise<void>((r) => setImmediate(r));
  await t.rejects(
    gate.lookup('b', () => Promise.reject(new Error('ENOTFOUND')), 1000),
    /ENOTFOUND/,
  );
  t.equal(gate.inUse.lookups, 0);
});

t.test('default look-up places: half of libuv pool, at least one', async (t) => {
  t.equal(defaultMaxLookups({ UV_THREADPOOL_SIZE: '4' }), 2);
  t.equal(defaultMaxLookups({ UV_THREADPOOL_SIZE: '16' }), 8);
  t.equal(defaultMaxLookups({ UV_THREADPOOL_SIZE: '1' }), 1);
  t.equal(defaultMaxLookups({}), 2);
});
