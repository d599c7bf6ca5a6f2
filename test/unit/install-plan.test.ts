// src/install/install.mjs, the install step's decision: build; refuse in one line when the build tools are
// missing (`npm ci --omit=dev`); skip when `npx cutout` links an already built checkout into its cache.
// And how it builds: one line per step, the full output in a log, printed when a step fails.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

type Plan = { action: 'build' } | { action: 'skip' | 'refuse'; message: string };
interface Step {
  title: string;
  cmd: string;
  args: string[];
  before?: () => void;
  done?: (output: string) => string;
}
interface InstallModule {
  runSteps(steps: Step[], io: { cwd: string; logFile: string; out?: (line: string) => void; err?: (text: string) => void }): number;
  formatBytes(n: number): string;
  sizeOf(p: string): number;
  BUILD_DEPENDENCIES: Record<string, string>;
  BUILT_FILES: string[];
  installPlan(state: { command: string | undefined; built: boolean; has: (name: string) => boolean; dependent?: boolean }): Plan;
  isDependent(root: string, localPrefix: string | undefined): boolean;
}
// Plain JavaScript outside src/ (it runs before tsc): loaded from the checkout, not from dist/.
const mod = (await import(pathToFileURL(path.join(PACKAGE_ROOT, 'src', 'install', 'install.mjs')).href)) as InstallModule;
const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const all = () => true;
const none = () => false;

t.test('package.json runs it as the install script', async (t) => {
  t.equal(pkg.scripts.install, 'node src/install/install.mjs');
});

t.test('the build list is the devDependencies other than the test tools', async (t) => {
  const build = Object.keys(mod.BUILD_DEPENDENCIES).sort();
  // The runner, the browser driver, the OpenAPI and JSON Schema validators, the Prometheus text parser,
  // the linters pretest runs (npm run lint: biome, the layer check, clang-format; knip).
  const testOnly = [
    'tap',
    'playwright-core',
    '@seriousme/openapi-schema-validator',
    'ajv',
    'ajv-formats',
    'parse-prometheus-text-format',
    'dependency-cruiser',
    '@biomejs/biome',
    'clang-format',
    'knip',
  ];
  t.same(
    build,
    Object.keys(pkg.devDependencies)
      .filter((d) => !testOnly.includes(d))
      .sort(),
  );
});

t.test('a full install builds', async (t) => {
  for (const command of ['ci', 'install', 'rebuild', undefined]) {
    t.same(mod.installPlan({ command, built: false, has: all }), { action: 'build' }, String(command));
    t.same(mod.installPlan({ command, built: true, has: all }), { action: 'build' }, `${command}, built already`);
  }
});

t.test('--omit=dev is refused in one line that says why and what to run', async (t) => {
  const plan = mod.installPlan({ command: 'ci', built: false, has: none });
  t.equal(plan.action, 'refuse');
  if (plan.action !== 'refuse') return;
  t.notMatch(plan.message, /\n/);
  for (const name of Object.keys(mod.BUILD_DEPENDENCIES)) t.match(plan.message, name);
  t.match(plan.message, /devDependencies/);
  t.match(plan.message, /Run `npm ci`, then `npm prune --omit=dev`/);
  const one = mod.installPlan({ command: 'install', built: false, has: (n) => n !== 'typescript' });
  t.equal(one.action, 'refuse');
  if (one.action === 'refuse') t.match(one.message, /\(typescript not installed/);
});

t.test('npx in a built checkout does not rebuild it, even pruned', async (t) => {
  t.equal(mod.installPlan({ command: 'exec', built: true, has: all }).action, 'skip');
  t.equal(mod.installPlan({ command: 'exec', built: true, has: none }).action, 'skip');
  t.equal(mod.installPlan({ command: 'exec', built: false, has: all }).action, 'build', 'npx of an unbuilt copy builds it');
  t.equal(mod.installPlan({ command: 'exec', built: false, has: none }).action, 'refuse');
  t.same(mod.BUILT_FILES, ['dist/src/cli/main.js', 'build/Release/cutout.node']);
  t.match(pkg.scripts['build:ts'], /dist\/src\/cli\/main\.js/, 'the bin the first built file names');
});

t.test("another project's npm install of a built checkout does not rebuild it", async (t) => {
  t.same(mod.installPlan({ command: 'install', built: true, has: all, dependent: true }), {
    action: 'skip',
    message: 'cutout: already built; linked into another project as it is',
  });
  t.equal(mod.installPlan({ command: 'install', built: true, has: none, dependent: true }).action, 'skip', 'even pruned');
  t.equal(mod.installPlan({ command: 'install', built: false, has: all, dependent: true }).action, 'build', 'an unbuilt checkout is built');
  t.equal(mod.installPlan({ command: 'ci', built: true, has: all, dependent: false }).action, 'build', "the checkout's own npm ci builds");
  const dir = t.testdir({ other: {}, checkout: {} });
  const checkout = path.join(dir, 'checkout');
  fs.symlinkSync(checkout, path.join(dir, 'link'));
  t.equal(mod.isDependent(checkout, undefined), false, 'no prefix: run by hand');
  t.equal(mod.isDependent(checkout, checkout), false, "the checkout's own install");
  t.equal(mod.isDependent(checkout, path.join(dir, 'link')), false, 'the checkout through a link');
  t.equal(mod.isDependent(checkout, path.join(dir, 'other')), true, 'another project');
});

t.test('package.json quiets the install: no .npmrc, dependency install scripts denied by name', async (t) => {
  t.notOk(fs.existsSync(path.join(PACKAGE_ROOT, '.npmrc')), 'no .npmrc (npm 11 warns about every key it does not know, on every npm and npx command)');
  const allow = (pkg as unknown as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
  // onnxruntime-node's postinstall downloads CUDA files from a host the build does not need (both
  // 1.29 and the peer's 1.17); the others have prebuilt binaries or do nothing cutout uses.
  t.equal(allow['onnxruntime-node'], false, "onnxruntime-node's postinstall (the CUDA 12 download) is denied");
  t.ok(
    Object.values(allow).every((v) => v === false),
    'every entry denies: no dependency script runs',
  );
});

const node = process.execPath;
const stepsDir = t.testdir({});
const logFile = path.join(stepsDir, 'logs', 'install.log');
const say = (text: string, code = 0): string[] => [
  '-e',
  `process.stdout.write(${JSON.stringify(text)}); process.stderr.write('(stderr)\\n'); process.exit(${code})`,
];

t.test("runSteps: one line per step, each step's output in the log only", async (t) => {
  const lines: string[] = [];
  let errText = '';
  const status = mod.runSteps(
    [
      { title: 'first', cmd: node, args: say('INFO RUN [a, b]\nmany lines\n'), done: (o) => `saw ${o.split('\n').length - 1} lines` },
      { title: 'second', cmd: node, args: say('built x\n') },
    ],
    { cwd: stepsDir, logFile, out: (l) => lines.push(l), err: (e) => (errText += e) },
  );
  t.equal(status, 0);
  t.equal(lines.length, 2, 'one line per step');
  t.match(lines[0], /^cutout: first: saw 3 lines \(\d+ s\)$/);
  t.match(lines[1], /^cutout: second: done \(\d+ s\)$/);
  t.equal(errText, '', 'nothing on stderr');
  const log = fs.readFileSync(logFile, 'utf8');
  t.match(log, /=== first: .*\nINFO RUN \[a, b\]\nmany lines\n\(stderr\)\n/);
  t.match(log, /=== second: .*\nbuilt x\n\(stderr\)\n/);
});

t.test('runSteps: a failing step prints its output and the log, and stops', async (t) => {
  const lines: string[] = [];
  let errText = '';
  let ranThird = false;
  const status = mod.runSteps(
    [
      { title: 'first', cmd: node, args: say('ok\n') },
      { title: 'addon', cmd: node, args: say('error: no compiler\n', 3) },
      { title: 'third', cmd: node, args: say(''), before: () => (ranThird = true) },
    ],
    { cwd: stepsDir, logFile, out: (l) => lines.push(l), err: (e) => (errText += e) },
  );
  t.equal(status, 3, "the failed step's exit status");
  t.equal(lines.length, 1, 'the step before it printed its line');
  t.notOk(ranThird, 'the steps after it do not run');
  t.equal(
    errText,
    `error: no compiler\n(stderr)\ncutout: addon failed (exit code 3, ${/addon failed \(exit code 3, (\d+) s/.exec(errText)?.[1]} s); its output is above, and the whole install's in ${logFile}\n`,
  );
  t.match(fs.readFileSync(logFile, 'utf8'), /error: no compiler\n\(stderr\)\n=== addon failed: exit code 3\n/);
  t.notMatch(fs.readFileSync(logFile, 'utf8'), /=== first: [\s\S]*=== first: /, 'the log starts afresh on each run');
});

t.test('runSteps: a command that cannot start fails its step', async (t) => {
  let errText = '';
  const status = mod.runSteps([{ title: 'missing', cmd: path.join(os.tmpdir(), 'no-such-command-here'), args: [] }], {
    cwd: stepsDir,
    logFile,
    out: () => undefined,
    err: (e) => (errText += e),
  });
  t.equal(status, 1);
  t.match(errText, /ENOENT[\s\S]*cutout: missing failed \(spawnSync \S+ ENOENT/);
});

t.test('sizes as npm prints them', async (t) => {
  t.equal(mod.formatBytes(999), '999 B');
  t.equal(mod.formatBytes(1500), '1.5 kB');
  t.equal(mod.formatBytes(88_188_479), '88.2 MB');
  t.equal(mod.formatBytes(450_000_000), '450 MB');
  t.equal(mod.formatBytes(1_300_000_000), '1.3 GB');
  const dir = t.testdir({ a: 'xyz', sub: { b: '12345' } });
  t.equal(mod.sizeOf(dir), 8);
  t.equal(mod.sizeOf(path.join(dir, 'sub', 'b')), 5);
  t.equal(mod.sizeOf(path.join(dir, 'none')), 0);
});
