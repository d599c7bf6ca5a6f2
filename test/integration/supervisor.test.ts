// `cutout serve --processes 2` restarts a process killed with SIGKILL, keeps serving on the shared port, and stops cleanly on SIGTERM.
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import t from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

const CLI = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

t.test('a killed process is replaced; the port keeps answering', async (t) => {
  const port = await freePort();
  const data = t.testdir({});
  const sup = spawn(
    process.execPath,
    [CLI, 'serve', '--processes', '2', '--port', String(port), '--host', '127.0.0.1', '--data', data, '--workers', '1', '--no-demo-key'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  t.teardown(() => {
    if (sup.exitCode === null) sup.kill('SIGKILL');
  });
  let out = '';
  const waiters: { re: RegExp; count: number; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if ((out.match(w.re) ?? []).length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  sup.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    check();
  });
  sup.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const waitFor = (re: RegExp, count: number, what: string) =>
    Promise.race([
      new Promise<void>((resolve) => {
        waiters.push({ re: new RegExp(re.source, 'g'), count, resolve });
        check();
      }),
      new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}:\n${out}`)), 120_000).unref()),
    ]);

  await waitFor(/cutout listening on/, 2, 'two listening processes');
  const pids = [...out.matchAll(/process (\d) started \(pid (\d+)\)/g)].map((m) => Number(m[2]));
  t.equal(pids.length, 2, 'two children started');
  process.kill(pids[0]!, 'SIGKILL');
  await waitFor(/exited \(SIGKILL\)/, 1, 'the crash to be noticed');
  await waitFor(/cutout listening on/, 3, 'the replacement to listen');
  const restarted = [...out.matchAll(/process 0 started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
  t.equal(restarted.length, 2, 'process 0 started twice');
  t.not(restarted[1], pids[0], 'with a new pid');

  for (let i = 0; i < 6; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    t.equal(res.status, 200, `health check ${i}`);
    await res.arrayBuffer();
  }
  const exited = new Promise<number | null>((resolve) => sup.once('exit', (code) => resolve(code)));
  sup.kill('SIGTERM');
  t.equal(await exited, 0, 'supervisor stops cleanly on SIGTERM');
  t.notMatch(out, /giving up/);
});

t.test('children stop when the supervisor is killed outright', async (t) => {
  const port = await freePort();
  const data = t.testdir({});
  const sup = spawn(
    process.execPath,
    [CLI, 'serve', '--processes', '2', '--port', String(port), '--host', '127.0.0.1', '--data', data, '--workers', '1', '--no-demo-key'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  sup.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 120_000;
  while ((out.match(/cutout listening on/g) ?? []).length < 2) {
    if (Date.now() > deadline) throw new Error(`servers did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const pids = [...out.matchAll(/started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
  t.teardown(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  sup.kill('SIGKILL');
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  t.same(pids.filter(alive), [], 'no orphan server processes');
});
