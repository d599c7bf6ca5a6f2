// Packages the model tools load that `npm prune --omit=dev` removes (onnx-proto: the ONNX protobuf
// classes). A missing one is named with the command that brings it back, at the version this
// checkout was tested with, instead of Node's "Cannot find module" and its require stack.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PACKAGE_ROOT } from './manifest.js';

const defaultRequire = createRequire(import.meta.url);

export class MissingPackageError extends Error {
  readonly code = 'ERR_CUTOUT_MISSING_PACKAGE';
  constructor(
    readonly packageName: string,
    readonly version: string | undefined,
  ) {
    const spec = version ? `${packageName}@${version}` : packageName;
    super(
      `this needs the package ${packageName}, a development dependency that is not installed here (npm prune --omit=dev and npm ci --omit=dev remove it). ` +
        `Install it with: npm install --no-save ${spec}   (or all of them: npm install --include=dev)`,
    );
    this.name = 'MissingPackageError';
  }
}

/** The version package.json's devDependencies pin for `name`; undefined when it is not listed or unreadable. */
export function devDependencyVersion(name: string, root = PACKAGE_ROOT): string | undefined {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies?: Record<string, unknown> };
    const v = pkg.devDependencies?.[name];
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `require(name)`, or MissingPackageError when it (or a package it needs) cannot be found. `load` is
 * the require to use (a test passes one that hides the package).
 */
export function requireDevPackage<T>(name: string, load: (id: string) => unknown = defaultRequire): T {
  try {
    return load(name) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' || (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') {
      throw new MissingPackageError(name, devDependencyVersion(name));
    }
    throw err;
  }
}
