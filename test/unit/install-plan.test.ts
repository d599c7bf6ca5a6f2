// src/install/install.mjs, the install step's decision: build; refuse in one line when the build tools are
// missing (`npm ci --omit=dev`); skip when `npx cutout` links an already built checkout into its cache.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

type Plan = { action: 'build' } | { action: 'skip' | 'refuse'; message: string };
interface InstallModule {
  BUILD_DEPENDENCIES: Record<string, string>;
  BUILT_FILES: string[];
  installPlan(state: { command: string | undefined; built: boolean; has: (name: string) => boolean }): Plan;
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
  // The runner, the browser driver, the OpenAPI and JSON Schema validators, the Prometheus text parser.
  const testOnly = ['tap', 'playwright-core', '@seriousme/openapi-schema-validator', 'ajv', 'ajv-formats', 'parse-prometheus-text-format'];
  t.same(build, Object.keys(pkg.devDependencies).filter((d) => !testOnly.includes(d)).sort());
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
