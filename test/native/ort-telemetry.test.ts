// ONNX Runtime 1.29's Linux build carries Microsoft's 1DS telemetry: creating its Env writes an
// empty /tmp/mat-debug-<pid>.log and /tmp/.ses, plus a device id and an SQLite event store under
// ~/.cache/Microsoft/DeveloperTools/.onnxruntime (docs/native.md). The addon sets
// ORT_DISABLE_TELEMETRY=1 unless the environment gives it a value. Each child runs with its own
// TMPDIR and HOME, so what ORT would write is seen there and nowhere else.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { writeTinyBatchModel } from '../helpers/tiny-batch-model.js';

const CHILD = fileURLToPath(new URL('../helpers/ort-env-child.js', import.meta.url));
const W = 16;
const H = 8;
const model = writeTinyBatchModel(W, H);

/** Every file and folder under `dir`, relative, sorted. */
function tree(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
}

async function runChild(t: Test, env: Record<string, string>) {
  const tmp = t.testdir({ tmp: {}, home: {} });
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TMPDIR: path.join(tmp, 'tmp'), HOME: path.join(tmp, 'home'), ...env };
  delete childEnv.XDG_CACHE_HOME;
  if (!('ORT_DISABLE_TELEMETRY' in env)) delete childEnv.ORT_DISABLE_TELEMETRY;
  const { stdout } = await promisify(execFile)(process.execPath, [CHILD, model, String(W), String(H)], { env: childEnv });
  return {
    report: JSON.parse(stdout) as { pid: number; maskLength: number; ORT_DISABLE_TELEMETRY: string | null },
    tmp: tree(path.join(tmp, 'tmp')),
    home: tree(path.join(tmp, 'home')),
  };
}

t.test('a process that ran a model leaves nothing in TMPDIR or HOME', async (t) => {
  const { report, tmp, home } = await runChild(t, {});
  t.equal(report.maskLength, W * H, 'the model ran (ORT created its Env)');
  t.equal(report.ORT_DISABLE_TELEMETRY, '1', 'the addon turned telemetry off');
  t.same(tmp, [], `no mat-debug-${report.pid}.log or .ses in TMPDIR`);
  t.same(home, [], 'no ~/.cache/Microsoft/DeveloperTools/.onnxruntime');
});

t.test("an operator's own value is kept", async (t) => {
  const { report, tmp, home } = await runChild(t, { ORT_DISABLE_TELEMETRY: 'true' });
  t.equal(report.ORT_DISABLE_TELEMETRY, 'true');
  t.same([...tmp, ...home], []);
});
