// Child for test/integration/decode-bombs.test: a real removal pool (one worker, CPU) in a process of
// its own, so its VmHWM is the pool's. Runs a normal photo, then every file named in the job at once
// with the normal photo among them, then the normal photo again; prints one JSON line.
//   node decode-bombs-child.js '{"files":[...],"normal":"...","size":"preview"}'
import { readFileSync } from 'node:fs';
import { fromRemoveFailure } from '../../src/api/errors.js';
import { createRemovalPool } from '../../src/pool/pool.js';
import { IDLE_RELEASE_MS } from '../../src/pool/idle-release.js';
import { loadBinding } from '../../src/native/binding.js';
import { DEFAULT_OPTIONS, type RemoveOptions } from '../../src/domain/removal.js';

export interface BombJob {
  files: string[];
  normal: string;
  size: RemoveOptions['size'];
}

export interface BombAnswer {
  status: number;
  code?: string;
  message?: string;
  width?: number;
  height?: number;
}

export interface BombReport {
  /** RSS after the first normal photo (MB). */
  idleMb: number;
  /** VmHWM over the whole run, pool start included (MB). */
  peakMb: number;
  /** RSS after the last normal photo, the burst over (MB). */
  afterMb: number;
  answers: BombAnswer[];
  normalAlongside: BombAnswer;
}

const job = JSON.parse(process.argv[2]!) as BombJob;

function statusMb(key: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'));
  return Math.round(Number(m![1]) / 1024);
}

const pool = await createRemovalPool({ workers: 1, device: 'cpu', maxQueue: 1000 });
const options: RemoveOptions = { ...DEFAULT_OPTIONS, size: job.size };
async function remove(file: string): Promise<BombAnswer> {
  const result = await pool.run({ input: new Uint8Array(readFileSync(file)), options });
  if (result.ok) return { status: 200, width: result.width, height: result.height };
  return { status: fromRemoveFailure(result.code, result.message).status, code: result.code, message: result.message };
}

/** The pool hands its kept memory back once idle (src/pool/idle-release.ts): RSS after that. */
async function idleRssMb(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, IDLE_RELEASE_MS));
  const binding = loadBinding();
  while (binding.scratchCache().cached > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 200)); // the release's trim comes after the cache
  return statusMb('VmRSS');
}

try {
  await remove(job.normal);
  const idleMb = await idleRssMb();
  const half = Math.floor(job.files.length / 2);
  const burst = [...job.files.slice(0, half).map(remove), remove(job.normal), ...job.files.slice(half).map(remove)];
  const settled = await Promise.all(burst);
  const normalAlongside = settled.splice(half, 1)[0]!;
  await remove(job.normal);
  const peakMb = statusMb('VmHWM');
  const report: BombReport = { idleMb, peakMb, afterMb: await idleRssMb(), answers: settled, normalAlongside };
  process.stdout.write(`${JSON.stringify(report)}\n`);
} finally {
  await pool.close();
}
