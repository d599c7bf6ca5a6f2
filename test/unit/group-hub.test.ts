// What the processes of `serve --processes N` share through their supervisor, over stand-in IPC
// channels (JSON, delivered on a later turn as node's are): one sandbox window for the group, the
// group's metrics with slow and ended processes, questions that time out or lose their supervisor.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { ClientWindow } from '../../src/api/client-window.js';
import { GroupWindow } from '../../src/api/group-window.js';
import { GroupHub } from '../../src/cli/group-hub.js';
import { GroupClient, GroupUnavailableError } from '../../src/process/group-client.js';
import type { IpcChannel } from '../../src/process/group-messages.js';
import type { MetricJson } from '../../src/observe/metrics-merge.js';
import { groupMetrics } from '../../src/observe/group-metrics.js';
import { createMetrics } from '../../src/observe/metrics.js';

// The hub's and the client's timers are unref'd (a server's sockets keep its process up): this does here.
const keepAlive = setInterval(() => {}, 1_000);
t.teardown(() => clearInterval(keepAlive));

interface End extends EventEmitter {
  send(message: unknown, cb?: (err: Error | null) => void): boolean;
}

/** Two ends of an IPC channel; `cut()` disconnects both, as a process exiting does. */
function channel(): { child: End; hub: End; cut(): void } {
  const child = new EventEmitter() as End;
  const hub = new EventEmitter() as End;
  let open = true;
  const deliver = (to: EventEmitter) => (message: unknown, cb?: (err: Error | null) => void) => {
    if (!open) {
      setImmediate(() => cb?.(new Error('Channel closed')));
      return false;
    }
    const copy = JSON.parse(JSON.stringify(message)) as unknown;
    setImmediate(() => open && to.emit('message', copy));
    setImmediate(() => cb?.(null));
    return true;
  };
  child.send = deliver(hub);
  hub.send = deliver(child);
  return {
    child,
    hub,
    cut() {
      open = false;
      child.emit('disconnect');
    },
  };
}

const requests = (n: number, extra: MetricJson[] = []): MetricJson[] => [
  { name: 'req_total', help: 'r', type: 'counter', aggregator: 'sum', values: [{ value: n, labels: { route: '/a' } }] },
  { name: 'queue', help: 'q', type: 'gauge', aggregator: 'sum', values: [{ value: 1, labels: {} }] },
  ...extra,
];
const summedValue = (parts: MetricJson[][], name: string) =>
  parts
    .flat()
    .filter((m) => m.name === name)
    .reduce((sum, m) => sum + m.values.reduce((s, v) => s + v.value, 0), 0);

/** A process: answers rounds with `count.n` requests (after `count.delayMs`), or never (null). */
function member(hub: GroupHub, index: number, count: { n: number; delayMs?: number } | null, timeoutMs = 2_000) {
  const ch = channel();
  hub.join(index, ch.hub as IpcChannel);
  const client = new GroupClient(ch.child as IpcChannel, timeoutMs);
  if (count) {
    client.answerMetrics(async () => {
      const n = count.n; // what it counted when asked
      if (count.delayMs) await new Promise((r) => setTimeout(r, count.delayMs));
      return requests(n);
    });
  }
  return { client, ch, leave: () => (ch.cut(), hub.leave(index)) };
}

t.test('the sandbox window counts every process`s requests for a client once', async (t) => {
  let now = 60_000 * 1000 + 5_000;
  const hub = new GroupHub({ sandboxRatePerMinute: 3, now: () => now });
  t.teardown(() => hub.close());
  const a = member(hub, 0, null);
  const b = member(hub, 1, null);
  const seen: boolean[] = [];
  for (const c of [a, b, a, b, b]) seen.push((await c.client.ask({ what: 'sandbox-take', client: '198.51.100.7' })).ok);
  t.same(seen, [true, true, true, false, false], 'three a minute from the group, not three from each');
  t.equal((await b.client.ask({ what: 'sandbox-take', client: '198.51.100.8' })).ok, true, 'another client has its own count');
  now += 60_000;
  t.equal((await a.client.ask({ what: 'sandbox-take', client: '198.51.100.7' })).ok, true, 'a new minute');
  await t.rejects(a.client.ask({ what: 'sandbox-take', client: 'x'.repeat(101) }), { name: 'GroupUnavailableError', message: /bad client key/ });
});

t.test('a scrape sums every process; a slow one counts with its latest answer', async (t) => {
  const hub = new GroupHub({ sandboxRatePerMinute: 3, collectTimeoutMs: 100 });
  t.teardown(() => hub.close());
  const counts: { n: number; delayMs?: number }[] = [{ n: 5 }, { n: 7 }];
  const a = member(hub, 0, counts[0]!);
  member(hub, 1, counts[1]!);
  let parts = await a.client.ask({ what: 'metrics' });
  t.equal(parts.length, 2);
  t.equal(summedValue(parts, 'req_total'), 12);
  t.equal(summedValue(parts, 'queue'), 2);

  // Process 2 never answers a round: without an answer yet it is absent, and the round ends on time.
  const silent = member(hub, 2, null);
  parts = await silent.client.ask({ what: 'metrics' });
  t.equal(parts.length, 2, 'the round ends without it');
  t.equal(summedValue(parts, 'req_total'), 12);

  // Process 1 is busy from now on: it answers each round after the round has ended.
  hub.leave(2);
  Object.assign(counts[1]!, { n: 9, delayMs: 250 });
  parts = await a.client.ask({ what: 'metrics' });
  t.equal(summedValue(parts, 'req_total'), 12, 'its latest answer (7) stands in: the sum does not drop to 5');
  await new Promise((r) => setTimeout(r, 300)); // its late answer (9) arrives
  Object.assign(counts[1]!, { n: 11 });
  parts = await a.client.ask({ what: 'metrics' });
  t.equal(summedValue(parts, 'req_total'), 14, 'a late answer still updates its latest: 5 + 9');
});

t.test('an ended process leaves its counters, not its gauges; a replacement starts from there', async (t) => {
  const hub = new GroupHub({ sandboxRatePerMinute: 3, collectTimeoutMs: 200 });
  t.teardown(() => hub.close());
  const a = member(hub, 0, { n: 5 });
  const b = member(hub, 1, { n: 7 });
  t.equal(summedValue(await a.client.ask({ what: 'metrics' }), 'req_total'), 12);
  b.leave();
  let parts = await a.client.ask({ what: 'metrics' });
  t.equal(summedValue(parts, 'req_total'), 12, 'its 7 stay');
  t.equal(summedValue(parts, 'queue'), 1, 'its queue went with it');
  member(hub, 1, { n: 2 });
  parts = await a.client.ask({ what: 'metrics' });
  t.equal(summedValue(parts, 'req_total'), 14, '5 + 7 before + 2 since the restart');
  t.equal(summedValue(parts, 'queue'), 2);
});

t.test('a process that answers a round and then ends is counted once', async (t) => {
  const hub = new GroupHub({ sandboxRatePerMinute: 3, collectTimeoutMs: 300 });
  t.teardown(() => hub.close());
  const a = member(hub, 0, { n: 5 });
  const b = member(hub, 1, { n: 7 });
  member(hub, 2, null); // keeps the round open until its timeout
  const round = a.client.ask({ what: 'metrics' });
  await new Promise((r) => setTimeout(r, 50)); // a and b have answered
  b.leave();
  t.equal(summedValue(await round, 'req_total'), 12);
});

t.test('the asker ending mid-round gets nothing and breaks nothing', async (t) => {
  const hub = new GroupHub({ sandboxRatePerMinute: 3, collectTimeoutMs: 50 });
  t.teardown(() => hub.close());
  const a = member(hub, 0, { n: 5 });
  const b = member(hub, 1, { n: 7 });
  const lost = a.client.ask({ what: 'metrics' });
  a.leave();
  await t.rejects(lost, GroupUnavailableError, 'its question fails when its channel goes');
  t.equal(summedValue(await b.client.ask({ what: 'metrics' }), 'req_total'), 7, 'a left before answering: nothing of it counted');
});

t.test('questions fail after their timeout or when the supervisor goes; the window falls back to its own count', async (t) => {
  const hub = new GroupHub({ sandboxRatePerMinute: 3 });
  t.teardown(() => hub.close());
  const ch = channel();
  // Not joined to the hub: nobody answers.
  const client = new GroupClient(ch.child as IpcChannel, 60);
  await t.rejects(client.ask({ what: 'metrics' }), { name: 'GroupUnavailableError', message: /no answer in 60 ms/ });
  await t.rejects(
    groupMetrics(createMetrics('0.0.0'), client).render(),
    { status: 503, code: 'metrics_unavailable', detail: /no answer in 60 ms/ },
    'a scrape: 503, not one process`s figures',
  );
  const pending = client.ask({ what: 'metrics' });
  ch.cut();
  await t.rejects(pending, { message: /the supervisor is gone/ });
  await t.rejects(new GroupClient(new EventEmitter() as unknown as IpcChannel).ask({ what: 'metrics' }), { message: /no IPC channel/ });

  const window = new GroupWindow(client, new ClientWindow(2));
  const takes = [];
  for (let i = 0; i < 3; i++) takes.push((await window.take('203.0.113.1')).ok);
  t.same(takes, [true, true, false], 'the process`s own window: still limited');
  client.close();
});
