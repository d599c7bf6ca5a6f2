// Where the evaluation photos live: research data read in place, never copied into the repository.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

const RELATIVE = path.join('..', 'shared', 'eval', 'dev');

/**
 * $CUTOUT_EVAL_DIR, else ../shared/eval/dev beside the repository; in a fresh clone of a local
 * checkout made elsewhere (e.g. under /tmp), ../shared/eval/dev beside that checkout. Returns the
 * first candidate when none exists, so a missing folder is reported by the path the docs name.
 */
export function evalDir(root = PACKAGE_ROOT): string {
  const fromEnv = process.env.CUTOUT_EVAL_DIR;
  if (fromEnv) return path.resolve(fromEnv);
  const beside = path.resolve(root, RELATIVE);
  if (fs.existsSync(beside)) return beside;
  const origin = localOrigin(root);
  const besideOrigin = origin ? path.resolve(origin, RELATIVE) : undefined;
  return besideOrigin && fs.existsSync(besideOrigin) ? besideOrigin : beside;
}

/** The checkout this one was cloned from, when that is a folder on this machine. */
function localOrigin(root: string): string | undefined {
  try {
    const url = execFileSync('git', ['-C', root, 'config', '--get', 'remote.origin.url'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dir = url.startsWith('file://') ? url.slice('file://'.length) : url;
    return path.isAbsolute(dir) && fs.existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}
