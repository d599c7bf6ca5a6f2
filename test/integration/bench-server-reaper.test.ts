// A bench stopped by a signal takes its `cutout serve` with it (test/harness/server-reaper.ts). Without
// it, `timeout 900 npm run bench:soak` killed the driver and left its server listening,
// holding a worker pool beside whatever ran next.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

const DRIVER = path.join(PACKAGE_ROOT, 'dist', 'test', 'harness', 'soak-driver.js');

/** True while a process with this pid exists (signal 0 checks without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until `pid` is gone; false if it is still there after `ms` (a hang, not a timing). */
async function gone(pid: number, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

/**
 * Starts a bench-like process that starts a server through the soak driver, prints the server's pid,
 * then does `then` (a line of JS). Resolves with the bench and the server's pid.
 */
async function benchWithServer(t: Test, then: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-reaper-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const script = `const m = await import(${JSON.stringify(DRIVER)});
const s = await m.startServer(${JSON.stringify(dataDir)}, { args: ['--workers', '1'] });
console.log('server ' + s.child.pid);
${then}`;
  const bench = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const serverPid = await new Promise<number>((resolve, reject) => {
    bench.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /server (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    bench.once('exit', (code) => reject(new Error(`bench exited (${code}) before its server listened`)));
  });
  // Whatever the assertions say, no server outlives the test.
  t.teardown(() => {
    if (alive(serverPid)) process.kill(serverPid, 'SIGKILL');
  });
  const ended = new Promise<{ code: number | null; signal: string | null }>((r) => bench.once('exit', (code, signal) => r({ code, signal })));
  return { bench, serverPid, ended };
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} to a bench ends its server, then the bench with 128 + the signal`, async (t) => {
    const { bench, serverPid, ended } = await benchWithServer(t, 'setInterval(() => {}, 1000);');
    t.ok(alive(serverPid), 'the server runs beside the bench');
    bench.kill(signal);
    const { code } = await ended;
    t.equal(code, 128 + os.constants.signals[signal], 'the bench ends as the signal meant');
    t.ok(await gone(serverPid, 20_000), 'and its server is gone');
  });
}

t.test('a bench that dies of an uncaught error takes its server with it', async (t) => {
  const { serverPid, ended } = await benchWithServer(t, "throw new Error('bench failed');");
  const { code } = await ended;
  t.equal(code, 1, 'the bench fails');
  t.ok(await gone(serverPid, 20_000), 'and its server is gone');
});
