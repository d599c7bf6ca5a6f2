// `cutout serve` as a process under a slow upload (100 kB/s, fast enough for uWS's slow-client
// rule, so only our deadline can end it): SIGTERM drains for --drain-timeout, then closes the
// connection and exits 0; a second SIGTERM exits at once with 130. An answer whose reader stopped
// is cut at the drain deadline too, with a line saying how much of it got out. Each child runs with its own
// TMPDIR and HOME, which must stay empty (ONNX Runtime's telemetry files, docs/native.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { multipart } from '../helpers/http-client.js';
import { noisySubject } from '../helpers/images.js';

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
  const child = spawn(
    process.execPath,
    [ENTRY, '--host', '127.0.0.1', '--port', '0', '--data', join(dir, 'data'), '--workers', '1', '--request-timeout', '3600', ...args],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
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
  sock.write(
    `POST /v1.0/removebg HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 20000000\r\nExpect: 100-continue\r\n\r\n`,
  );
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

t.test('SIGTERM with a reader that stopped: its answer is cut at the drain deadline, logged, and the process exits 0', { timeout: 180_000 }, async (t) => {
  const s = serve(t, ['--drain-timeout', '0.5']);
  const { base, key } = await started(s);
  // ~6.5 MB of PNG: more than the kernel's buffers take while nobody reads.
  const { body, contentType } = multipart([
    { name: 'image_file', value: await noisySubject(2400, 1800), filename: 'noise.png' },
    { name: 'size', value: 'full' },
  ]);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(
      `${base}/v1.0/removebg`,
      { method: 'POST', agent: false, headers: { 'X-Api-Key': key, 'Content-Type': contentType, 'Content-Length': body.length } },
      (r) => {
        r.pause(); // and never reads again until the server is gone
        resolve(r);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  t.equal(res.statusCode, 200);
  const length = Number(res.headers['content-length']);
  s.child.kill('SIGTERM');
  t.equal(await s.exit, 0, 'exit 0');
  const cut = /drain: cutting request #\d+ POST \/v1\.0\/removebg from \S+ while responding: (\d+) of (\d+) body bytes sent \(status 200\)\n/.exec(s.output());
  t.ok(cut, 'the cut answer is named');
  t.equal(Number(cut?.[2]), length, "with the answer's length");
  t.ok(Number(cut?.[1]) < length, `and the part that got out (${cut?.[1]} bytes)`);
  t.match(
    s.output(),
    /SIGTERM received, finishing 1 in-flight request\(s\)\n[\s\S]*drain: 1 request\(s\) still in flight after 0\.5 s \(--drain-timeout\); closing their connections\n[\s\S]*cutout serve: stopped\n/,
  );
  const got = await new Promise<{ bytes: number; complete: boolean }>((resolve) => {
    let bytes = 0;
    res.on('data', (c: Buffer) => (bytes += c.length));
    res.on('close', () => resolve({ bytes, complete: res.complete }));
    res.resume();
  });
  t.equal(got.complete, false, 'the client sees a cut body');
  t.ok(got.bytes <= Number(cut?.[1]), `it got no more than was sent (${got.bytes})`);
});
