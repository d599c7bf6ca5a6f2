// The staged pool (the GPU path's scheduler) with low-priority work, on the CPU with the tiny
// brightness model: a low task enters the pipeline behind every normal one, low tasks hold at most
// lowPriorityPlaces places ('share_full' beyond) and do not count against maxQueue, and every
// inference batch is reported once it has run, with its bucket and run time (onBatch: the
// cutout_batch_size and cutout_batch_run_seconds histograms).
import t from 'tap';
import type { BatchReport } from '../../src/pool/pool-api.js';
import sharp from 'sharp';
import { createRemovalPool } from '../../src/pool/pool.js';
import { DEFAULT_OPTIONS, type RemoveOptions } from '../../src/domain/removal.js';
import { writeTinyBatchModel } from '../helpers/tiny-batch-model.js';

const model = writeTinyBatchModel();
const options: RemoveOptions = { ...DEFAULT_OPTIONS, refine: false, decontaminate: false };

function photo(): Promise<Buffer> {
  return sharp({ create: { width: 160, height: 120, channels: 3, background: '#000000' } })
    .png()
    .toBuffer();
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: { code?: string }) => e.code ?? 'no code',
  );

t.test('low work enters behind normal work, within its share; batches are reported', async (t) => {
  const batches: BatchReport[] = [];
  const p = await createRemovalPool({
    model: 'isnet-fp16-batch',
    modelPath: model,
    device: 'cpu',
    warmUp: false,
    workers: 1,
    maxBatch: 1,
    maxQueue: 1,
    lowPriorityPlaces: 1,
    onBatch: (batch) => batches.push(batch),
  });
  t.teardown(() => p.close());

  const started: string[] = [];
  const inputs = await Promise.all([photo(), photo(), photo(), photo()]);
  const go = (name: string, i: number, priority: 'normal' | 'low') =>
    p.run({ input: inputs[i]!, options: { ...options } }, undefined, { onStart: () => started.push(name) }, priority);

  const a = go('A', 0, 'normal'); // takes the one photo worker at once
  const low = go('L', 1, 'low'); // waits
  const b = go('B', 2, 'normal'); // waits, ahead of L
  t.equal(await codeOf(go('L2', 3, 'low')), 'share_full', 'one low place, taken');
  const results = await Promise.all([a, low, b]);
  t.same(
    results.map((r) => r.ok),
    [true, true, true],
  );
  t.same(started, ['A', 'B', 'L'], 'the waiting low task started last');
  t.same(
    batches.map((b) => [b.size, b.bucket]),
    [
      [1, 1],
      [1, 1],
      [1, 1],
    ],
    'one batch of one per photo, each reported once it ran',
  );
  t.ok(
    batches.every((b) => typeof b.ms === 'number' && b.ms >= 0),
    'with its run time',
  );
  t.equal((await p.run({ input: await photo(), options: { ...options } }, undefined, undefined, 'low')).ok, true, 'the place is free again');
});
