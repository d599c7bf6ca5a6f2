// Child of bench/compare.ts: one checkout's removal pool, driven over IPC. It loads the pool of the
// checkout named on its command line (its dist/ must be built; a model name may follow), then answers
// each { file, size } message with one removal's wall time, stage timings, the minor page faults the
// whole process took meanwhile (every thread: a count, not a time) and its RSS after, one at a time.
import fs from 'node:fs';
import path from 'node:path';

interface Job {
  file: string;
  size: string;
}

const root = process.argv[2];
const model = process.argv[3];
if (!root) throw new Error('usage: compare-child.js CHECKOUT [MODEL]');
const poolMod = (await import(path.join(root, 'dist', 'src', 'pool', 'pool.js'))) as {
  createRemovalPool(
    o: Record<string, unknown>,
  ): Promise<{ run(t: unknown): Promise<{ ok: boolean; timings?: Record<string, number>; code?: string }>; close(): Promise<void> }>;
};
// The removal defaults moved from pool/task to domain/removal; take them from wherever this checkout has them.
async function defaultOptions(): Promise<Record<string, unknown>> {
  for (const file of [
    ['domain', 'removal.js'],
    ['pool', 'task.js'],
  ]) {
    const p = path.join(root!, 'dist', 'src', ...file);
    if (!fs.existsSync(p)) continue;
    const mod = (await import(p)) as { DEFAULT_OPTIONS?: Record<string, unknown> };
    if (mod.DEFAULT_OPTIONS) return mod.DEFAULT_OPTIONS;
  }
  // Without them the worker would take missing switches as off (no refinement): a different pipeline.
  throw new Error(`${root}: no DEFAULT_OPTIONS in dist/src/domain/removal.js or dist/src/pool/task.js`);
}
const DEFAULTS = await defaultOptions();
const pool = await poolMod.createRemovalPool({ workers: 1, device: 'cpu', ...(model ? { model } : {}) });
process.send!({ ready: true });
process.on('message', (job: Job | 'exit') => {
  if (job === 'exit') {
    void pool.close().then(() => process.exit(0));
    return;
  }
  const input = new Uint8Array(fs.readFileSync(job.file));
  const faults0 = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  const measured = () => ({ ms: performance.now() - t0, faults: process.resourceUsage().minorPageFault - faults0, rssMB: process.memoryUsage.rss() / 2 ** 20 });
  void pool.run({ input, options: { ...DEFAULTS, size: job.size } }).then(
    (r) => process.send!({ ...measured(), ok: r.ok, code: r.code, timings: r.timings ?? {} }),
    (err: Error) => process.send!({ ...measured(), ok: false, code: err.message, timings: {} }),
  );
});
