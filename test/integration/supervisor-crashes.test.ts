// The supervisor (src/cli/supervisor.ts) over a stand-in child: restarts back off exponentially up
// to a cap, crashes are counted per process, a process that keeps crashing is given up while the
// others keep serving, live processes are asked to reconcile the ledger after each crash, and a
// second signal kills every process at once. Back-off figures are asserted from the log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ENTRY = fileURLToPath(new URL('../helpers/supervisor-entry.js', import.meta.url));

interface Run {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  waitFor(re: RegExp, count?: number): Promise<void>;
  exit: Promise<number | null>;
}

function supervise(env: Record<string, string>, count = 2): Run {
  const child = spawn(process.execPath, [ENTRY, String(count)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const poke = () => waiters.splice(0).forEach((w) => w());
  child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), poke()));
  child.stderr!.on('data', (d: Buffer) => ((err += d.toString()), poke()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => (resolve(code), poke())));
  const waitFor = async (re: RegExp, n = 1) => {
    const all = new RegExp(re.source, 'g');
    while ((`${out}${err}`.match(all) ?? []).length < n) {
      if (child.exitCode !== null) throw new Error(`exited before ${re} ×${n}:\n${out}\n${err}`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { child, out: () => out, err: () => err, waitFor, exit };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('a process that keeps crashing is given up; the other keeps serving', { timeout: 60_000 }, async (t) => {
  const run = supervise({ TEST_CRASH: '1' });
  t.teardown(() => void run.child.kill('SIGKILL'));
  await run.waitFor(/giving up on it/);
  const err = run.err();
  t.match(err, /process 1 \(pid \d+\) exited \(code 3\); crash 1 within 60 s\n/);
  t.match(err, /process 1 \(pid \d+\) exited \(code 3\); crash 4 within 60 s\n/);
  t.match(err, /cutout supervisor: process 1 crashed 4 times within 60 s; giving up on it \(1 of 2 processes still serving\)\n/, 'said on stderr');
  const delays = [...run.out().matchAll(/restarting process 1 in ([\d.]+) s/g)].map((m) => Number(m[1]));
  t.same(delays, [0.01, 0.02, 0.04], 'back-off doubles per crash, capped');
  t.equal((run.out().match(/process 1 started/g) ?? []).length, 4, 'started once and restarted three times');
  t.equal((run.out().match(/child 0 serving/g) ?? []).length, 1, 'process 0 never restarted');
  await run.waitFor(/child 0 got cutout:reconcile/); // one per crash once it listens; an early one may come before
  const pid0 = Number(/child 0 serving \(pid (\d+)\)/.exec(run.out())![1]);
  t.ok(alive(pid0), 'process 0 still serving');
  t.notMatch(run.out(), /supervisor exit/, 'the supervisor keeps running');

  run.child.kill('SIGTERM');
  t.equal(await run.exit, 0, 'a clean stop');
  t.match(run.out(), /child 0 stopping/);
  t.notOk(alive(pid0));
});

t.test('when every process is given up the supervisor exits 1', { timeout: 60_000 }, async (t) => {
  const run = supervise({ TEST_CRASH: 'all' });
  t.teardown(() => void run.child.kill('SIGKILL'));
  t.equal(await run.exit, 1);
  t.match(run.err(), /process 0 crashed 4 times within 60 s; giving up on it/);
  t.match(run.err(), /process 1 crashed 4 times within 60 s; giving up on it/);
  t.match(run.err(), /giving up on it \(1 of 2 processes still serving\)\n[\s\S]*giving up on it \(0 of 2 processes still serving\)\n/, 'the count goes down');
  t.match(run.err(), /every process was given up; exiting\n/);
});

t.test('a second signal kills every process at once', { timeout: 60_000 }, async (t) => {
  const run = supervise({ TEST_SLOW_STOP: '1' });
  t.teardown(() => void run.child.kill('SIGKILL'));
  await run.waitFor(/child \d serving/, 2);
  const pids = [...run.out().matchAll(/serving \(pid (\d+)\)/g)].map((m) => Number(m[1]));
  run.child.kill('SIGTERM');
  await run.waitFor(/child \d draining/, 2);
  t.same(pids.filter(alive).length, 2, 'both still draining after the first signal');
  run.child.kill('SIGTERM');
  t.equal(await run.exit, 130);
  t.match(run.err(), /cutout supervisor: second SIGTERM, killing 2 process\(es\) now\n/);
  t.same(pids.filter(alive), [], 'no process left');
});
