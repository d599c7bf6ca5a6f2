// A fresh cgroup with a memory limit, for runs of `cutout serve` inside one (bench:faults' memory-limit
// fault, test/integration/serve-memory-limit.test.ts). Needs a memory controller this process may
// write (root, v2 or v1); where there is none it says why, so the caller skips with the reason.
import fs from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  /** The cgroup's `cgroup.procs`: a process joins by writing its pid there (its threads follow). */
  procs: string;
  /** The most memory the cgroup used since it was made (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`), when the kernel says. */
  peakBytes(): number | undefined;
  /** Processes the kernel's OOM killer killed in it (v1 `memory.oom_control`, v2 `memory.events`). */
  oomKills(): number;
  /** Remove the cgroup (its processes must have exited). */
  remove(): void;
}

function readNumber(file: string, pattern?: RegExp): number | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8');
    const m = pattern ? pattern.exec(text) : /^\d+/.exec(text.trim());
    return m ? Number(pattern ? m[1] : m[0]) : undefined;
  } catch {
    return undefined;
  }
}

/** A cgroup named `name` limited to `limitBytes`, or the reason none can be made here. */
export function makeMemoryCgroup(name: string, limitBytes: number): MemoryCgroup | string {
  const root = '/sys/fs/cgroup';
  const tries: Array<{ dir: string; v2: boolean }> = [];
  try {
    if (fs.readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) tries.push({ dir: path.join(root, name), v2: true });
  } catch {
    // no v2 root here
  }
  if (fs.existsSync(path.join(root, 'memory', 'memory.limit_in_bytes'))) tries.push({ dir: path.join(root, 'memory', name), v2: false });
  const reasons: string[] = [];
  for (const { dir, v2 } of tries) {
    try {
      fs.mkdirSync(dir);
    } catch (err) {
      reasons.push(`${dir}: ${(err as Error).message}`);
      continue;
    }
    const limitFile = path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes');
    try {
      fs.writeFileSync(limitFile, String(limitBytes));
    } catch (err) {
      fs.rmdirSync(dir);
      reasons.push(`${limitFile}: ${(err as Error).message}`);
      continue;
    }
    const file = (f: string) => path.join(dir, f);
    return {
      procs: file('cgroup.procs'),
      peakBytes: () => (v2 ? readNumber(file('memory.peak')) : readNumber(file('memory.max_usage_in_bytes'))),
      oomKills: () => (v2 ? readNumber(file('memory.events'), /^oom_kill (\d+)$/m) : readNumber(file('memory.oom_control'), /^oom_kill (\d+)$/m)) ?? 0,
      remove: () => fs.rmdirSync(dir),
    };
  }
  return `no cgroup with a memory limit can be made here (${reasons.join('; ') || 'no memory controller mounted'})`;
}
