// A small tmpfs for full-disk tests: mounted for the test, unmounted in its teardown. Needs root.

import type { Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

/** Mounts a tmpfs of `sizeMb`; its folder, or why it cannot (not root, no mount) for the skip line. */
export function mountTmpfs(t: Test, sizeMb: number): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'not root: cannot mount a tmpfs' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-tmpfs-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs: ${(mounted.stderr || mounted.error?.message || '').trim()}` };
  }
  t.teardown(() => {
    spawnSync('umount', ['-l', dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir };
}

/** Writes `file` until the filesystem refuses (a megabyte at a time, then page by page); its size. */
export function fillDisk(file: string): number {
  const fd = fs.openSync(file, 'w');
  const mb = Buffer.alloc(1 << 20, 1);
  let size = 0;
  try {
    for (;;) size += fs.writeSync(fd, mb);
  } catch {
    // ENOSPC
  }
  try {
    for (;;) size += fs.writeSync(fd, mb, 0, 4096);
  } catch {
    // the last pages
  }
  fs.closeSync(fd);
  return size;
}
