// After `npm prune --omit=dev`, `cutout model` says which package it needs and how to get it, exits 1,
// and prints no stack. The prune is simulated: a preload makes Node's resolver fail for onnx-proto
// as it does when the package is gone (the shared node_modules is never pruned).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import t from 'tap';
import { devDependencyVersion, MissingPackageError, requireDevPackage } from '../../src/model/dev-package.js';
import { MODELS_DIR } from '../../src/model/manifest.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** A --require preload: onnx-proto (and its subpaths) cannot be found, with Node's own error code. */
const HIDE = `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'onnx-proto' || request.startsWith('onnx-proto/')) {
    const err = new Error("Cannot find module '" + request + "'\\nRequire stack:\\n- /somewhere/onnx-transform.js");
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  }
  return resolve.call(this, request, ...rest);
};
`;

t.test('cutout model --from F --int8 without onnx-proto: one line naming it and the npm command, exit 1', async (t) => {
  const dir = t.testdir({
    'hide-onnx-proto.cjs': HIDE,
    photos: {
      'one.jpg': await sharp({ create: { width: 64, height: 48, channels: 3, background: '#a37' } })
        .jpeg()
        .toBuffer(),
    },
  });
  const version = devDependencyVersion('onnx-proto');
  t.match(version, /^\d+\.\d+\.\d+$/, `package.json pins onnx-proto (${version})`);
  const r = spawnSync(
    process.execPath,
    [
      '--require',
      path.join(dir, 'hide-onnx-proto.cjs'),
      MAIN,
      'model',
      '--from',
      path.join(MODELS_DIR, 'isnet-int8.onnx'),
      '--int8',
      '--model-family',
      'isnet',
      '--calibration-photos',
      path.join(dir, 'photos'),
      '--out',
      path.join(dir, 'out.onnx'),
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  t.equal(r.status, 1, 'exit 1');
  t.equal(r.stdout, '', 'no progress: it stops before any work');
  t.equal(
    r.stderr,
    'cutout model: this needs the package onnx-proto, a development dependency that is not installed here (npm prune --omit=dev and npm ci --omit=dev remove it). ' +
      `Install it with: npm install --no-save onnx-proto@${version}   (or all of them: npm install --include=dev)\n`,
  );
  t.notMatch(r.stderr, /\n\s+at |Require stack|Cannot find module/, 'no stack, no require stack');
  t.notOk(fs.existsSync(path.join(dir, 'out.onnx')), 'nothing written');
});

t.test('requireDevPackage: a missing package is named with its pinned version; other errors pass through', async (t) => {
  const missing = (id: string) => {
    throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  };
  t.throws(() => requireDevPackage('onnx-proto', missing), new MissingPackageError('onnx-proto', devDependencyVersion('onnx-proto')));
  const err = t.throws(() => requireDevPackage('not-a-dev-dependency', missing)) as MissingPackageError;
  t.match(err.message, /npm install --no-save not-a-dev-dependency {3}\(or all/, 'unpinned: the bare name');
  const broken = () => {
    throw new SyntaxError('Unexpected token');
  };
  t.throws(() => requireDevPackage('onnx-proto', broken), { name: 'SyntaxError' }, 'a broken package is not called missing');
  t.equal(requireDevPackage<{ onnx: unknown }>('onnx-proto').onnx !== undefined, true, 'installed: loaded');
});
