// `cutout serve` as a process: refuses uWS's JS fallback, rejects bad flags and unknown models, starts with ledger+pool, drains on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { tryRealLedger } from '../helpers/real.js';

const ENTRY = fileURLToPath(new URL('../helpers/serve-entry.js', import.meta.url));

function run(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; out: string[]; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [ENTRY, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  child.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out, exit };
}

function waitForLine(child: ChildProcess, re: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) {
        child.stdout!.off('data', onData);
        resolve(m);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing ${re}: ${buf}`)));
  });
}

t.test('refuses to start on the uWS JS fallback', async (t) => {
  const { out, exit } = run(['--port', '0', '--data', t.testdir()], { UWS_USE_FALLBACK: '1' });
  t.equal(await exit, 1);
  t.match(out.join(''), /fallback/);
});

t.test('bad flags exit 2 with usage', async (t) => {
  const { out, exit } = run(['--port', 'banana']);
  t.equal(await exit, 2);
  t.match(out.join(''), /port/);
  t.match(out.join(''), /Usage: cutout serve/);
});

t.test('an unknown model (flag or env) stops the start with the names it knows', async (t) => {
  for (const [args, env] of [[['--model', 'isnet-huge'], {}], [[], { CUTOUT_MODEL: 'isnet-huge' }]] as const) {
    const { out, exit } = run(['--port', '0', '--data', t.testdir(), ...args], env);
    t.equal(await exit, 1);
    t.match(out.join(''), /Unknown model 'isnet-huge'; models\/manifest.json lists isnet-fp32, isnet-int8, isnet-fp16/);
  }
});

t.test('start, serve, drain on SIGTERM', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cutout-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const probe = await tryRealLedger(join(dataDir, 'probe'));
  if ('skip' in probe) {
    t.comment(probe.skip);
    t.pass('skipped: needs the real ledger');
    return;
  }
  await probe.ledger.close();
  const { child, out, exit } = run(['--host', '127.0.0.1', '--port', '0', '--data', dataDir, '--workers', '1']);
  t.teardown(() => void child.kill('SIGKILL'));
  const demo = waitForLine(child, /Demo API key \(shown once\): (\S+)/).catch(() => null);
  const [, base] = await waitForLine(child, /listening on (https?:\/\/\S+)/);
  const key = (await Promise.race([demo, Promise.resolve(null)]))?.[1] ?? null;
  t.ok(base, `listening at ${base}`);
  t.equal((await request(`${base}/readyz`)).status, 200);
  t.ok(key, 'a demo key was printed on first start');
  const account = await request(`${base}/v1.0/account`, { headers: { 'X-Api-Key': key! } });
  t.equal(account.status, 200);
  // One removal in flight, then SIGTERM: it must complete, then the process exits 0.
  const inflight = postImage(base!, await makeImage('jpeg', 200, 150), {}, { 'X-Api-Key': key! });
  t.equal((await request(`${base}/healthz`)).status, 200); // the removal's request was read before this one
  child.kill('SIGTERM');
  const res = await inflight;
  t.equal(res.status, 200, 'in-flight request finished during shutdown');
  t.equal(await exit, 0, 'clean exit');
  t.match(out.join(''), /SIGTERM received/);
  t.match(out.join(''), /stopped/);
});
