// The memory this process may use: the tightest cgroup limit along its cgroup path (v2 `memory.max`,
// v1 `memory.limit_in_bytes`) or the host's memory, whichever is smaller. Read once at start by
// `cutout serve`, which sizes its photo workers to fit (src/pool/memory-fit.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface MemoryLimit {
  bytes: number;
  /** Where the figure comes from, for messages: e.g. `cgroup v2 memory.max (/sys/fs/cgroup/app/memory.max)`. */
  source: string;
}

/** A file's text, or undefined when it cannot be read. */
export type ReadText = (file: string) => string | undefined;

const readText: ReadText = (file) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

// cgroup v1 writes "no limit" as 2^63 − 1 rounded down to a page; v2 as `max`.
const NO_LIMIT_BYTES = 2 ** 60;

function parseLimit(text: string | undefined): number | undefined {
  const t = text?.trim();
  if (!t || t === 'max' || !/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return n > 0 && n < NO_LIMIT_BYTES ? n : undefined;
}

/** `/a/b` → `/a/b`, `/a`, `/`: a limit anywhere above a cgroup applies to it too. */
function ancestors(cgroupPath: string): string[] {
  const out: string[] = [];
  let p = path.posix.normalize(cgroupPath.startsWith('/') ? cgroupPath : `/${cgroupPath}`);
  for (;;) {
    out.push(p);
    if (p === '/') return out;
    p = path.posix.dirname(p);
  }
}

/** The tightest cgroup memory limit on this process, or undefined where none is set (or none can be read). */
export function cgroupMemoryLimit(read: ReadText = readText, root = '/sys/fs/cgroup'): MemoryLimit | undefined {
  const table = read('/proc/self/cgroup');
  if (!table) return undefined;
  let best: MemoryLimit | undefined;
  const consider = (file: string, kind: string) => {
    const bytes = parseLimit(read(file));
    if (bytes !== undefined && (!best || bytes < best.bytes)) best = { bytes, source: `${kind} (${file})` };
  };
  for (const line of table.split('\n')) {
    // hierarchy-ID:controller-list:cgroup-path (the path may itself hold colons)
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const cgroupPath = line.slice(second + 1);
    for (const dir of ancestors(cgroupPath)) {
      if (line.startsWith('0:') && controllers === '') {
        // v2: mounted at the root, or beside v1 at unified/ (hybrid hosts).
        consider(path.posix.join(root, dir, 'memory.max'), 'cgroup v2 memory.max');
        consider(path.posix.join(root, 'unified', dir, 'memory.max'), 'cgroup v2 memory.max');
      } else if (controllers.split(',').includes('memory')) {
        consider(path.posix.join(root, 'memory', dir, 'memory.limit_in_bytes'), 'cgroup v1 memory.limit_in_bytes');
      }
    }
  }
  return best;
}

/** What this process may use: its cgroup's limit where that is below the host's memory, else the host's memory. */
export function memoryLimit(read: ReadText = readText, hostBytes = os.totalmem()): MemoryLimit {
  const cgroup = cgroupMemoryLimit(read);
  return cgroup && cgroup.bytes < hostBytes ? cgroup : { bytes: hostBytes, source: 'host memory' };
}
