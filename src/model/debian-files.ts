// Files from Debian packages (apt-get download + dpkg -x into a cache folder): real photos for the
// benchmarks and the int8 calibration, fetched on demand and never committed.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

/**
 * Absolute paths of `files` (paths inside the package, e.g. 'usr/share/backgrounds/x.jpg') from
 * Debian package `pkg`, extracted under cache/pkg. Throws with apt's first line if it cannot fetch.
 */
export function debianFiles(cache: string, pkg: string, files: readonly string[]): string[] {
  const root = path.join(cache, pkg);
  const wanted = files.map((f) => path.join(root, f));
  if (wanted.every((f) => fs.existsSync(f))) return wanted;
  fs.mkdirSync(cache, { recursive: true });
  try {
    execFileSync('apt-get', ['download', pkg], { cwd: cache, stdio: 'pipe' });
  } catch (err) {
    throw new Error(`apt-get download ${pkg} failed: ${(err as Error).message.split('\n')[0]}`);
  }
  const deb = fs.readdirSync(cache).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
  if (!deb) throw new Error(`apt-get download ${pkg} left no .deb in ${cache}`);
  execFileSync('dpkg', ['-x', path.join(cache, deb), root], { stdio: 'pipe' });
  fs.rmSync(path.join(cache, deb));
  const missing = wanted.filter((f) => !fs.existsSync(f));
  if (missing.length) throw new Error(`${pkg} has no ${missing.map((m) => path.relative(root, m)).join(', ')}`);
  return wanted;
}
