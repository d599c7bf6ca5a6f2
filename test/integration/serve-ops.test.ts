// `cutout serve` as a process, with the real pool and ledger: the sandbox and metrics start-up lines,
// a real sandbox removal capped at preview and charged nothing, a JSON log line per request on
// stdout, build info in /metrics; and with the sandbox off and a non-loopback bind, 404 and 403.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import sharp from 'sharp';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { sandboxImage } from '../helpers/sandbox.js';

const ENTRY = fileURLToPath(new URL('../helpers/serve-entry.js', import.meta.url));

function serve(t: Test, args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; stdout: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [ENTRY, '--port', '0', '--data', t.testdir(), '--workers', '1', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => void child.kill('SIGKILL'));
  return { child, stdout: () => out, exit };
}

/** Resolves with the first match of `re` in the output so far or to come. */
function waitFor(child: ChildProcess, stdout: () => string, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = re.exec(stdout());
      if (!m) return;
      child.stdout!.off('data', check);
      resolve(m);
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing ${re}: ${stdout()}`)));
    check();
  });
}

t.test('sandbox on, loopback bind: limits and metrics access at start-up; a real removal at preview for 0 credits', async (t) => {
  const s = serve(t, ['--host', '127.0.0.1', '--sandbox-rate-per-minute', '4', '--sandbox-share', '1']);
  const [, key] = await waitFor(s.child, s.stdout, /Demo API key \(shown once\): (\S+)/);
  const [, base] = await waitFor(s.child, s.stdout, /listening on (http:\/\/\S+)/);
  await waitFor(s.child, s.stdout, /^metrics: .*$/m);
  t.match(
    s.stdout(),
    /^sandbox: POST \/sandbox\/v1\.0\/removebg on: no key, preview size, 0 credits; 4 requests\/min per client address, at most 1 pool place \(running \+ waiting\), behind keyed requests$/m,
  );
  t.match(s.stdout(), /^metrics: GET \/metrics, no token \(loopback bind\)$/m);

  const credits = async () => (await request(`${base}/v1.0/account`, { headers: { 'X-Api-Key': key! } })).json().data.attributes.credits.total as number;
  const before = await credits();
  const photo = await makeImage('jpeg', 1200, 900); // 1.08 MP: preview scales it down to 0.25 MP
  const res = await sandboxImage(base!, photo, { size: 'full' }, { 'X-Request-Id': 'serve-ops-1' });
  t.equal(res.status, 200, res.status === 200 ? 'removed' : res.text());
  t.equal(res.headers['x-credits-charged'], '0');
  t.equal(res.headers['x-request-id'], 'serve-ops-1');
  const meta = await sharp(res.body).metadata();
  t.equal(meta.format, 'png');
  t.ok(meta.width! * meta.height! <= 250_000, `capped at preview: ${meta.width}x${meta.height}`);
  t.equal(`${meta.width}`, res.headers['x-width']);
  t.equal(await credits(), before, 'the demo account was not charged');

  const metrics = await request(`${base}/metrics`);
  t.equal(metrics.status, 200);
  t.match(
    metrics.text(),
    /^cutout_build_info\{version="\d+\.\d+\.\d+[^"]*",model="isnet-int8",device="cpu",model_family="isnet",model_sha256="[0-9a-f]{64}"\} 1$/m,
  );
  t.match(metrics.text(), /^cutout_sandbox_requests_total 1$/m);

  // Every request so far has its JSON line on stdout (not a terminal): account, sandbox, account, metrics.
  const line = await waitFor(s.child, s.stdout, /^\{.*"req_id":"serve-ops-1".*\}$/m);
  t.match(JSON.parse(line[0]), {
    level: 'info',
    route: '/sandbox/v1.0/removebg',
    status: 200,
    account: null,
    credits: 0,
    output: `${meta.width}x${meta.height}`,
    ms: { inference: Number },
  });
  await waitFor(s.child, s.stdout, /^\{.*"route":"\/metrics".*\}$/m);
  const logLines = s
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  t.equal(logLines.length, 4, 'one line per request');
  t.notOk(
    logLines.some((l) => l.includes(key!)),
    'the demo key is in no log line',
  );

  s.child.kill('SIGTERM');
  t.equal(await s.exit, 0);
});

t.test('CUTOUT_SANDBOX=off and a non-loopback bind without a token: 404 and 403, and start-up says so', async (t) => {
  const s = serve(t, ['--host', '0.0.0.0', '--no-demo-key'], { CUTOUT_SANDBOX: 'off' });
  const [, port] = await waitFor(s.child, s.stdout, /listening on http:\/\/\S+:(\d+)/);
  await waitFor(s.child, s.stdout, /^metrics: .*$/m);
  // The address bound, not a loopback one: what the bind exposes, then the URL to open locally.
  t.match(
    s.stdout(),
    new RegExp(
      `^cutout listening on http://0\\.0\\.0\\.0:${port} \\(data: [^)]+\\); every IPv4 interface: open http://127\\.0\\.0\\.1:${port}/ on this machine$`,
      'm',
    ),
  );
  t.match(s.stdout(), /^sandbox: off \(\/sandbox\/v1\.0\/removebg answers 404; --sandbox on to serve it\)$/m);
  t.match(s.stdout(), /^metrics: GET \/metrics is refused on 0\.0\.0\.0 without a token; set --metrics-token \(or CUTOUT_METRICS_TOKEN\) to serve it$/m);
  const base = `http://127.0.0.1:${port}`;
  const off = await sandboxImage(base, await makeImage('png'));
  t.equal(off.status, 404);
  t.equal(off.json().errors[0].code, 'not_found');
  const metrics = await request(`${base}/metrics`);
  t.equal(metrics.status, 403);
  t.equal(metrics.json().errors[0].code, 'metrics_disabled');
  s.child.kill('SIGTERM');
  t.equal(await s.exit, 0);
});
