// Sizing the CPU path's photo workers to the memory the process may use (src/process/memory-limit.ts),
// from the start-up estimate (memory-estimate.ts), before any worker starts: a server that fits
// its limit instead of one the kernel kills under load. Fewer workers first, then the memory-first
// release policy ('every-task', docs/memory.md); what the operator gave explicitly is never changed:
// a `--workers` (or `--memory-release`) that cannot fit is refused with the limit and the estimate.
import type { MemoryLimit } from '../process/memory-limit.js';
import { estimateMemory, type MemoryEstimate } from './memory-estimate.js';
import type { MemoryRelease } from './memory-release.js';

/**
 * The share of the limit the estimate may fill: the rest is for what it does not count (the model
 * file's page cache, other processes in the same cgroup) and for the estimate's own error.
 */
export const MEMORY_LIMIT_SHARE = 0.9;

export interface FitRequest {
  /** The model's name (undefined: the manifest's default). */
  model: string | undefined;
  /** Workers wanted: the operator's, or the default sizing. */
  workers: number;
  workersGiven: boolean;
  release: MemoryRelease;
  releaseGiven: boolean;
  limit: MemoryLimit;
}

export type Fit =
  | { ok: true; workers: number; release: MemoryRelease; estimate: MemoryEstimate; /** What was changed to fit, for the start-up banner. */ changed?: string }
  | { ok: false; message: string };

const MB = 1024 * 1024;

export function fitToMemory(r: FitRequest): Fit {
  const limitMb = Math.floor(r.limit.bytes / MB);
  const budgetMb = Math.floor(limitMb * MEMORY_LIMIT_SHARE);
  const estimate = (workers: number, release: MemoryRelease) => estimateMemory(r.model, workers, release);
  const wanted = estimate(r.workers, r.release);
  if (wanted.peakMb <= budgetMb) return { ok: true, workers: r.workers, release: r.release, estimate: wanted };

  const against = `the memory limit of ${limitMb} MB (${r.limit.source}; up to ${Math.round(MEMORY_LIMIT_SHARE * 100)}% planned)`;
  const releases: MemoryRelease[] = r.releaseGiven || r.release === 'every-task' ? [r.release] : [r.release, 'every-task'];
  const smallest = r.workersGiven ? r.workers : 1;
  for (const release of releases) {
    for (let n = r.workers; n >= smallest; n--) {
      const e = estimate(n, release);
      if (e.peakMb > budgetMb) continue;
      const what = [n !== r.workers ? `${n} worker${n === 1 ? '' : 's'} instead of ${r.workers}` : '', release !== r.release ? `--memory-release ${release}` : '']
        .filter(Boolean)
        .join(' and ');
      return { ok: true, workers: n, release, estimate: e, changed: `${what} to fit ${against}: ~${e.peakMb} MB busy` };
    }
  }
  const lastRelease = releases[releases.length - 1]!;
  const least = estimate(smallest, lastRelease);
  const hints = [r.workersGiven && r.workers > 1 ? 'fewer --workers' : '', lastRelease !== 'every-task' ? '--memory-release every-task' : '', 'a higher limit'].filter(Boolean);
  return {
    ok: false,
    message:
      `~${least.peakMb} MB busy with ${least.workers} worker${least.workers === 1 ? '' : 's'} and --memory-release ${lastRelease} ` +
      `(${least.model}, the start-up estimate) is above ${against}: give ${hints.join(', or ')}`,
  };
}

/** The pool cannot start within the memory limit with what the operator gave (fitToMemory's message). */
export class MemoryLimitError extends Error {
  override name = 'MemoryLimitError';
}
