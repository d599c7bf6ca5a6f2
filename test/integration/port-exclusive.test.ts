// A second `cutout serve` on a port that one already serves fails to start. uWS listens with
// SO_REUSEPORT by default, so without the check it would start and the kernel split the connections
// between the two: half of the clients met another data folder (other keys, other credits).
// The processes of `--processes N` still share their port (test/integration/supervisor.test.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServer, stopServer } from '../harness/soak-driver.js';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

const CLI = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');

t.test('a second server on a served port refuses to start, alone or with --processes', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-port-'));
  const first = await startServer(dataDir, { args: ['--workers', '1'] });
  t.teardown(async () => {
    await stopServer(first);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const port = new URL(first.url).port;
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-port-other-'));
  t.teardown(() => fs.rmSync(other, { recursive: true, force: true }));
  const serve = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', port, '--data', other, '--no-demo-key', '--workers', '1', ...args], {
      encoding: 'utf8',
      timeout: 60_000,
    });

  const alone = serve();
  t.equal(alone.status, 1, 'exits 1');
  t.match(alone.stderr, `cutout serve: failed to start: Could not listen on 127.0.0.1:${port} (in use)`);
  t.notMatch(alone.stdout, /device:|cutout listening/, 'before the model is loaded');
  t.notOk(fs.existsSync(path.join(other, 'data.mdb')), 'before the ledger is opened');

  const group = serve('--processes', '2');
  t.equal(group.status, 1, 'the supervisor exits 1 before starting any process');
  t.match(group.stderr, `cutout serve: failed to start: Could not listen on 127.0.0.1:${port} (in use)`);
  t.notMatch(group.stdout, /process 0 started/);

  // Every connection still reaches the first server.
  for (let i = 0; i < 8; i++) t.equal((await fetch(`${first.url}/healthz`, { headers: { Connection: 'close' } })).status, 200);
  t.equal(first.child.exitCode, null, 'the first server is still up');
});
