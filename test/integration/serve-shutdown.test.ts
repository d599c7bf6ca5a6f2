// `cutout serve` as a process under a slow upload (100 kB/s, fast enough for uWS's slow-client
// rule, so only our deadline can end it): SIGTERM drains for --drain-timeout, then closes the
// connection and exits 0; a second SIGTERM exits at once with 130. Each child runs with its own
// TMPDIR and HOME, which must stay empty (ONNX Runtime's telemetry files, docs/native.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';

const ENTRY = fileURLToPath(new URL('../helpers/serve-entry.js', import.meta.url));

interface Served {
  child: ChildProcess;
  output: () => string;
  waitFor(re: RegExp): Promise<RegExpMatchArray>;
  exit: Promise<number | null>;
  dirs: { tmp: string; home: string };
}

function serve(t: Test, args: string[]): Served {
  const dir = t.testdir({ tmp: {}, home: {}, data: {} });
  const dirs = { tmp: join(dir, 'tmp'), home: join(dir, 'home') };
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: dirs.tmp, HOME: dirs.home };
  delete env.ORT_DISABLE_TELEMETRY;
  delete env.XDG_CACHE_HOME;
  const child = spawn(process.execPath, [ENTRY, '--host', '127.0.0.1', '--port', '0', '--data', join(dir, 'data'), '--workers', '1', '--request-timeout', '3600', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  const waiters: Array<() => void> = [];
  const poke = () => waiters.splice(0).forEach((w) => w());
  child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), poke()));
  child.stderr!.on('data', (d: Buffer) => ((out += d.toString()), poke()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => (resolve(code), poke())));
  const waitFor = async (re: RegExp) => {
    for (;;) {
      const m = re.exec(out);
      if (m) return m;
      if (child.exitCode !== null) throw new Error(`exited before printing ${re}:\n${out}`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { child, output: () => out, waitFor, exit, dirs };
}

/** A removal upload that announces 20 MB and sends 100 kB/s; resolves once the server read its headers (100 Continue). */
async function slowUpload(t: Test, base: string, key: string): Promise<{ closed: Promise<string> }> {
  const { port } = new URL(base);
  const sock = net.connect(Number(port), '127.0.0.1');
  let received = '';
  const closed = new Promise<string>((resolve) => sock.once('close', () => resolve(received)));
  sock.on('error', () => {});
  let trickle: ReturnType<typeof setInterval> | undefined;
  sock.once('close', () => clearInterval(trickle));
  t.teardown(() => (clearInterval(trickle), sock.destroy()));
  const headersRead = new Promise<void>((resolve) =>
    sock.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      if (received.includes('100 Continue')) resolve();
    }),
  );
  sock.write(`POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 20000000\r\nExpect: 100-continue\r\n\r\n`);
  await headersRead;
  trickle = setInterval(() => sock.writable && sock.write('x'.repeat(2000)), 20);
  return { closed };
}

async function started(s: Served): Promise<{ base: string; key: string }> {
  const [, key] = await s.waitFor(/Demo API key \(shown once\): (\S+)/);
  const [, base] = await s.waitFor(/listening on (https?:\/\/\S+)/);
  return { base: base!, key: key! };
}

t.test('SIGTERM: the drain deadline closes a slow upload and the process exits 0', { timeout: 120_000 }, async (t) => {
  const s = serve(t, ['--drain-timeout', '0.5']);
  const { base, key } = await started(s);
  const upload = await slowUpload(t, base, key);
  s.child.kill('SIGTERM');
  t.equal(await s.exit, 0, 'exit 0');
  t.equal(await upload.closed, 'HTTP/1.1 100 Continue\r\n\r\n', 'the upload was closed without an answer');
  t.match(s.output(), /SIGTERM received, finishing 1 in-flight request\(s\)\n/);
  t.match(s.output(), /drain: 1 request\(s\) still in flight after 0\.5 s \(--drain-timeout\); closing their connections\n/);
  t.match(s.output(), /cutout serve: stopped\n/);
  t.same(readdirSync(s.dirs.tmp), [], 'no mat-debug-<pid>.log or .ses in TMPDIR');
  t.same(readdirSync(s.dirs.home), [], 'no ~/.cache/Microsoft in HOME');
});

t.test('a second SIGTERM exits at once with 130', { timeout: 120_000 }, async (t) => {
  const s = serve(t, []); // the default drain (30 s): without the second signal it would exit 0, not 130
  const { base, key } = await started(s);
  const upload = await slowUpload(t, base, key);
  s.child.kill('SIGTERM');
  await s.waitFor(/SIGTERM received/);
  s.child.kill('SIGTERM');
  t.equal(await s.exit, 130);
  t.match(s.output(), /cutout serve: second SIGTERM, exiting now\n/);
  t.notMatch(s.output(), /stopped/);
  await upload.closed;
  t.same(readdirSync(s.dirs.tmp), []);
});
