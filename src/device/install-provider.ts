// `npm run gpu`: puts ONNX Runtime's CUDA provider beside libonnxruntime.so.1 (build/Release), where
// ORT's provider bridge looks for it. The tarball comes from the npm registry through `npm pack` (no
// change to node_modules or package.json, nothing on a CPU box), is checked against its pinned
// integrity, and each library against its sha256, before anything is written.
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ProviderPackage } from './cuda-provider-package.js';

export class ProviderInstallError extends Error {
  readonly code = 'ERR_CUTOUT_GPU_INSTALL';
  constructor(message: string) {
    super(message);
    this.name = 'ProviderInstallError';
  }
}

export interface InstallOptions {
  pkg: ProviderPackage;
  /** Where the libraries go: the folder of libonnxruntime.so.1. */
  libDir: string;
  /** Where the tarball is downloaded (removed after a successful install unless keepTarball). */
  cacheDir: string;
  keepTarball?: boolean;
  log?: (line: string) => void;
}

export interface InstallReport {
  /** Libraries written now; empty when they were already in place and intact. */
  installed: string[];
  libDir: string;
}

const sha256File = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

function integrityOf(file: string): string {
  return `sha512-${crypto.createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
}

function intact(file: string, sha: string): boolean {
  return fs.existsSync(file) && sha256File(file) === sha;
}

/** `npm pack SPEC` into cacheDir; returns the tarball's path. */
function download(pkg: ProviderPackage, cacheDir: string): string {
  fs.mkdirSync(cacheDir, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['pack', pkg.spec, '--json', '--pack-destination', cacheDir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    throw new ProviderInstallError(
      `npm pack ${pkg.spec} failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' ')}`,
    );
  }
  let filename: string | undefined;
  try {
    filename = (JSON.parse(r.stdout) as Array<{ filename?: string }>)[0]?.filename;
  } catch {
    // fall through
  }
  if (!filename) throw new ProviderInstallError(`npm pack ${pkg.spec} printed no tarball name`);
  // npm names scoped tarballs scope-name-version.tgz; the file is where --pack-destination said.
  return path.join(cacheDir, filename.replace(/^@/, '').replace('/', '-'));
}

/** Extract the package's libraries into a fresh temporary folder; returns that folder. */
function extract(pkg: ProviderPackage, tarball: string): string {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-gpu-'));
  const members = Object.keys(pkg.files).map((f) => `${pkg.dir}/${f}`);
  const r = spawnSync('tar', ['-xzf', tarball, '-C', out, ...members], { encoding: 'utf8' });
  if (r.status !== 0) {
    fs.rmSync(out, { recursive: true, force: true });
    throw new ProviderInstallError(`Could not extract ${members.join(', ')} from ${tarball}: ${(r.stderr || r.error?.message || '').trim()}`);
  }
  return out;
}

export function installProvider(opts: InstallOptions): InstallReport {
  const { pkg, libDir } = opts;
  const log = opts.log ?? (() => {});
  if (!fs.existsSync(path.join(libDir, 'libonnxruntime.so.1'))) {
    throw new ProviderInstallError(`${libDir} has no libonnxruntime.so.1: build the addon first (npm run build:native)`);
  }
  const missing = Object.entries(pkg.files).filter(([f, sha]) => !intact(path.join(libDir, f), sha));
  if (missing.length === 0) {
    log(`CUDA provider already installed in ${libDir} (sha256 checked)`);
    return { installed: [], libDir };
  }
  log(`downloading ${pkg.spec} from the npm registry (about 180 MB)…`);
  const tarball = download(pkg, opts.cacheDir);
  const integrity = integrityOf(tarball);
  if (integrity !== pkg.integrity) {
    fs.rmSync(tarball, { force: true });
    throw new ProviderInstallError(`${pkg.spec} has integrity ${integrity}, expected ${pkg.integrity}: refusing it`);
  }
  const staging = extract(pkg, tarball);
  try {
    for (const [file, sha] of Object.entries(pkg.files)) {
      const got = sha256File(path.join(staging, pkg.dir, file));
      if (got !== sha) throw new ProviderInstallError(`${file} from ${pkg.spec} has sha256 ${got}, expected ${sha}: refusing it`);
    }
    const installed: string[] = [];
    for (const [file] of missing) {
      const dest = path.join(libDir, file);
      const tmp = `${dest}.tmp-${process.pid}`;
      fs.copyFileSync(path.join(staging, pkg.dir, file), tmp);
      fs.chmodSync(tmp, 0o755);
      fs.renameSync(tmp, dest);
      installed.push(file);
      log(`installed ${dest}`);
    }
    return { installed, libDir };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    if (!opts.keepTarball) fs.rmSync(tarball, { force: true });
  }
}
