// `cutout serve` in a real cgroup with a 600 MB memory limit (the fault report's): an explicit
// `--workers 2` is refused at start with the limit and the estimate, and the default sizing starts
// within it, saying what it changed. Needs a cgroup this process may create (root with a writable
// memory controller, v2 or v1); skipped with the reason elsewhere. The sizing logic itself is tested
// with injected limits in test/unit/memory-fit.test.ts.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { makeMemoryCgroup } from '../harness/memory-cgroup.js';

const ENTRY = fileURLToPath(new URL('../helpers/serve-entry.js', import.meta.url));
const LIMIT = 600 * 1024 * 1024;

const cgroup = makeMemoryCgroup(`cutout-test-${process.pid}`, LIMIT);

/** `serve …` started inside the cgroup; resolves once it exits (stopped with SIGTERM once `until` matched its output). */
function serveInCgroup(procs: string, args: string[], until?: RegExp): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // The shell joins the cgroup, then becomes node: the server reads its limit from the start.
    const child = spawn('/bin/sh', ['-c', `echo $$ > "${procs}" && exec "$0" "$@"`, process.execPath, ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (until?.test(out)) child.kill('SIGTERM');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

t.test('a 600 MB cgroup: --workers 2 refused, the default fits', { skip: typeof cgroup === 'string' ? cgroup : false }, async (t) => {
  if (typeof cgroup === 'string') return;
  t.teardown(cgroup.remove);
  const flags = ['--port', '0', '--host', '127.0.0.1', '--no-demo-key'];

  const refused = await serveInCgroup(cgroup.procs, [...flags, '--data', t.testdir({}), '--workers', '2']);
  t.equal(refused.code, 1, 'exit 1');
  t.match(
    refused.out,
    /cutout serve: failed to start: ~\d+ MB busy with 2 workers and --memory-release every-task \(isnet-int8, the start-up estimate\) is above the memory limit of 600 MB \(cgroup v[12] memory\.(max|limit_in_bytes)/,
  );
  t.notMatch(refused.out, /listening/, 'never listened');

  const fits = await serveInCgroup(cgroup.procs, [...flags, '--data', path.join(t.testdirName, 'fits')], /cutout listening on[\s\S]*memory limit: .*\n/);
  t.match(
    fits.out,
    /memory limit: (\d+ workers? instead of \d+ and )?--memory-release every-task to fit the memory limit of 600 MB \(cgroup v[12] memory\.(max|limit_in_bytes) \(\/sys\/fs\/cgroup\/[^)]*cutout-test-\d+[^)]*\); up to 90% planned\): ~\d+ MB busy/,
  );
  t.match(fits.out, /; request bodies and downloads up to \d+ MB at once \(more get 503 service_busy\)/, "the queue's inputs sized to it too");
  t.match(fits.out, /memory: ~\d+ MB idle, up to ~(\d+) MB busy with 1 worker/);
  const busy = Number(/up to ~(\d+) MB busy/.exec(fits.out)?.[1]);
  t.ok(busy <= 600 * 0.9 + 10, `the printed estimate (${busy} MB) fits the limit`);
});
