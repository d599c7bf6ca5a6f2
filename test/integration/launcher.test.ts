// How a user starts cutout: bin/cutout (npm's bin for `npx cutout`, and `npm start`) runs node on
// dist/src/cli/main.js with glibc's huge-page tunable unless the caller set GLIBC_TUNABLES, passing
// every argument on, found through npm's .bin symlink, and in the same process (exec), so that a
// signal sent to `npm start` reaches the server: SIGTERM to npm's pid drains, stops and frees the port.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';
import { HUGE_PAGE_TUNABLES } from '../../src/process/launch-env.js';

const LAUNCHER = path.join(PACKAGE_ROOT, 'bin', 'cutout');

/** A fake `node` first on PATH that prints what it was started with. */
function fakeNode(dir: string): NodeJS.ProcessEnv {
  const bin = path.join(dir, 'fake-bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(
    path.join(bin, 'node'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script's own ${…}.
    '#!/bin/sh\nprintf "tunables=%s\\n" "${GLIBC_TUNABLES-<unset>}"\nfor a in "$@"; do printf "arg=%s\\n" "$a"; done\n',
    { mode: 0o755 },
  );
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
  delete env.GLIBC_TUNABLES;
  return env;
}

t.test("bin/cutout: the huge-page tunable when none is set, a caller's kept, arguments passed on, found through a symlink", async (t) => {
  const dir = t.testdir({});
  const env = fakeNode(dir);
  const main = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
  const run = (file: string, extra: NodeJS.ProcessEnv) =>
    spawnSync(file, ['serve', '--port', '0', 'two words'], { env: { ...env, ...extra }, encoding: 'utf8' });
  const plain = run(LAUNCHER, {});
  t.equal(plain.status, 0, plain.stderr || 'exits as node did');
  t.equal(
    plain.stdout,
    `tunables=${HUGE_PAGE_TUNABLES}\narg=${main}\narg=serve\narg=--port\narg=0\narg=two words\n`,
    'the tunable of src/process/launch-env.ts, and main.js with every argument as given',
  );
  t.equal(
    run(LAUNCHER, { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).stdout.split('\n')[0],
    'tunables=glibc.malloc.arena_max=2',
    "the caller's setting is kept",
  );
  t.equal(run(LAUNCHER, { GLIBC_TUNABLES: '' }).stdout.split('\n')[0], 'tunables=', 'even an empty one');
  // npm puts a symlink to the launcher in node_modules/.bin: main.js is found from where it points.
  const link = path.join(dir, 'cutout-link');
  fs.symlinkSync(LAUNCHER, link);
  t.equal(run(link, {}).stdout.split('\n')[1], `arg=${main}`, 'through a symlink, main.js beside the launcher');
});

t.test('npm start, then SIGTERM to npm: the server drains, stops and frees its port', async (t) => {
  const dir = t.testdir({ data: {} });
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.GLIBC_TUNABLES;
  const npm = spawn('npm', ['start', '--', '--host', '127.0.0.1', '--port', '0', '--data', path.join(dir, 'data'), '--workers', '1'], {
    cwd: PACKAGE_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => void npm.kill('SIGKILL'));
  let out = '';
  const waiters: Array<() => void> = [];
  const poke = () => waiters.splice(0).forEach((w) => w());
  npm.stdout.on('data', (d: Buffer) => ((out += d.toString()), poke()));
  npm.stderr.on('data', (d: Buffer) => ((out += d.toString()), poke()));
  const exit = new Promise<number | null>((resolve) => npm.on('exit', (code) => (resolve(code), poke())));
  const waitFor = async (re: RegExp) => {
    for (;;) {
      const m = re.exec(out);
      if (m) return m;
      if (npm.exitCode !== null) throw new Error(`npm exited before printing ${re}:\n${out}`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const port = Number((await waitFor(/cutout listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
  // The server is npm's own child (sh and bin/cutout exec'd into node), running with the tunable.
  const children = fs.readFileSync(`/proc/${npm.pid}/task/${npm.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  t.equal(children.length, 1, `one child of npm: ${children.join(' ')}`);
  const server = children[0]!;
  t.match(fs.readFileSync(`/proc/${server}/cmdline`, 'utf8'), /node\0.*dist\/src\/cli\/main\.js\0serve\0/, 'the child is node running cutout serve');
  t.ok(fs.readFileSync(`/proc/${server}/environ`, 'utf8').split('\0').includes(`GLIBC_TUNABLES=${HUGE_PAGE_TUNABLES}`), 'with the huge-page tunable');

  npm.kill('SIGTERM');
  await waitFor(/cutout serve: SIGTERM received, finishing 0 in-flight request\(s\)/);
  await waitFor(/cutout serve: stopped/);
  await exit;
  t.notOk(fs.existsSync(`/proc/${server}`), 'the server process is gone, not orphaned');
  const refused = await new Promise<string>((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => (sock.destroy(), resolve('connected')));
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
  t.equal(refused, 'ECONNREFUSED', 'the port is free');
});
