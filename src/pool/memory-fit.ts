// Sizing the CPU path's photo workers to the memory the process may use (src/process/memory-limit.ts),
// from the start-up estimate (memory-estimate.ts), before any worker starts: a server that fits
// its limit instead of one the kernel kills under load. Fewer workers first, then the memory-first
// release policy ('every-task', docs/memory.md); what the operator gave explicitly is never changed:
// a `--workers` (or `--memory-release`) that cannot fit is refused with the limit and the estimate.
import type { MemoryLimit } from '../process/memory-limit.js';
import { MAX_DECODE_BYTES_IN_FLIGHT, MAX_INPUT_BYTES_IN_MEMORY } from '../domain/removal.js';
import { estimateMemory, type EstimatedModel, type MemoryEstimate } from './memory-estimate.js';
import type { MemoryRelease } from '../domain/memory-release.js';

/**
 * The share of the limit the estimate may fill: the rest is for what it does not count (the model
 * file's page cache, other processes in the same cgroup) and for the estimate's own error.
 */
export const MEMORY_LIMIT_SHARE = 0.9;

export interface FitRequest {
  /** The model's name (undefined: the manifest's default), or a model file's size and input. */
  model: EstimatedModel;
  /** Workers wanted: the operator's, or the default sizing. */
  workers: number;
  workersGiven: boolean;
  release: MemoryRelease;
  releaseGiven: boolean;
  limit: MemoryLimit;
  /**
   * The request inputs held beside the pool (bodies, downloads: MAX_INPUT_BYTES_IN_MEMORY): the
   * operator's `bytes` when `given`, else sized here and never below `bytes` (two of the largest bodies).
   */
  inputs?: { bytes: number; given: boolean };
}

export type Fit =
  | {
      ok: true;
      workers: number;
      release: MemoryRelease;
      estimate: MemoryEstimate;
      /** What the decodes in flight may hold at once (decodeCeilingFor). */
      decodeCeilingBytes: number;
      /** What the request inputs may hold at once (inputCeilingFor, or the operator's; 0 without FitRequest.inputs). */
      inputCeilingBytes: number;
      /** What was changed to fit, for the start-up banner. */
      changed?: string;
    }
  | { ok: false; message: string };

const MB = 1024 * 1024;

export function fitToMemory(r: FitRequest): Fit {
  const limitMb = Math.floor(r.limit.bytes / MB);
  const budgetMb = Math.floor(limitMb * MEMORY_LIMIT_SHARE);
  const estimate = (workers: number, release: MemoryRelease) => estimateMemory(r.model, workers, release);
  const against = `the memory limit of ${limitMb} MB (${r.limit.source}; up to ${Math.round(MEMORY_LIMIT_SHARE * 100)}% planned)`;
  /** A fit, with the decode ceiling it leaves and the banner's words for what was changed. */
  const fits = (workers: number, release: MemoryRelease, e: MemoryEstimate, what?: string): Fit => {
    // Without `inputs`, none are planned beside the pool (0).
    const inputCeilingBytes = !r.inputs ? 0 : r.inputs.given ? r.inputs.bytes : inputCeilingFor(r.limit, e, r.inputs.bytes);
    const decodeCeilingBytes = decodeCeilingFor(r.limit, e, inputCeilingBytes);
    const notes = [
      decodeCeilingBytes < MAX_DECODE_BYTES_IN_FLIGHT
        ? `photo decodes up to ${Math.round(decodeCeilingBytes / MB)} MB at once (a photo needing more is refused)`
        : '',
      r.inputs && !r.inputs.given && inputCeilingBytes < MAX_INPUT_BYTES_IN_MEMORY
        ? `request bodies and downloads up to ${Math.round(inputCeilingBytes / MB)} MB at once (more get 503 service_busy)`
        : '',
    ]
      .filter(Boolean)
      .join('; ');
    const changed = what ? `${what} to fit ${against}: ~${e.peakMb} MB busy${notes && `; ${notes}`}` : notes && `${notes}, to fit ${against}`;
    return { ok: true, workers, release, estimate: e, decodeCeilingBytes, inputCeilingBytes, ...(changed && { changed }) };
  };
  const wanted = estimate(r.workers, r.release);
  if (wanted.peakMb <= budgetMb) return fits(r.workers, r.release, wanted);

  const releases: MemoryRelease[] = r.releaseGiven || r.release === 'every-task' ? [r.release] : [r.release, 'every-task'];
  const smallest = r.workersGiven ? r.workers : 1;
  for (const release of releases) {
    for (let n = r.workers; n >= smallest; n--) {
      const e = estimate(n, release);
      if (e.peakMb > budgetMb) continue;
      const what = [
        n !== r.workers ? `${n} worker${n === 1 ? '' : 's'} instead of ${r.workers}` : '',
        release !== r.release ? `--memory-release ${release}` : '',
      ]
        .filter(Boolean)
        .join(' and ');
      return fits(n, release, e, what);
    }
  }
  const lastRelease = releases[releases.length - 1]!;
  const least = estimate(smallest, lastRelease);
  const hints = [
    r.workersGiven && r.workers > 1 ? 'fewer --workers' : '',
    lastRelease !== 'every-task' ? '--memory-release every-task' : '',
    'a higher limit',
  ].filter(Boolean);
  return {
    ok: false,
    message:
      `~${least.peakMb} MB busy with ${least.workers} worker${least.workers === 1 ? '' : 's'} and --memory-release ${lastRelease} ` +
      `(${least.model}, the start-up estimate) is above ${against}: give ${hints.join(', or ')}`,
  };
}

/** Decode memory a limit leaves at least: photos of a few megapixels always decode. */
export const MIN_DECODE_CEILING_BYTES = 64 * MB;

/**
 * What a process's photo decodes may hold at once under a memory limit (process/decode-memory.ts): the
 * planned share of the limit less the idle process (a decode for the model over 32 MiB runs with the
 * block cache handed back, so the rest is the decodes' own) and less the request inputs beside them,
 * within [MIN_DECODE_CEILING_BYTES, MAX_DECODE_BYTES_IN_FLIGHT]. The pipeline also refuses one decode
 * above it (400), so a photo that could not fit beside the idle process is refused rather than run
 * alone into the limit.
 */
export function decodeCeilingFor(limit: MemoryLimit, estimate: MemoryEstimate, inputBytes = 0): number {
  const room = Math.floor(limit.bytes * MEMORY_LIMIT_SHARE - estimate.idleMb * MB - inputBytes);
  return Math.min(MAX_DECODE_BYTES_IN_FLIGHT, Math.max(MIN_DECODE_CEILING_BYTES, room));
}

/**
 * What request inputs (bodies read, images downloaded: the queue's memory) may hold at once under a
 * memory limit: half of what the planned share leaves beside the busy pool, since a body and the image
 * copied out of it live together until the answer, within [floorBytes, MAX_INPUT_BYTES_IN_MEMORY].
 * The floor (two of the largest bodies) wins over the limit: beyond it the memory-pressure check
 * (process/memory-pressure.ts) answers 503 before a body is taken.
 */
export function inputCeilingFor(limit: MemoryLimit, estimate: MemoryEstimate, floorBytes: number): number {
  const room = Math.floor((limit.bytes * MEMORY_LIMIT_SHARE - estimate.peakMb * MB) / 2);
  return Math.max(floorBytes, Math.min(MAX_INPUT_BYTES_IN_MEMORY, room));
}

/** The pool cannot start within the memory limit with what the operator gave (fitToMemory's message). */
export class MemoryLimitError extends Error {
  override name = 'MemoryLimitError';
}
