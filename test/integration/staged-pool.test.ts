// The staged pool (src/pool/staged-pool.ts), the GPU path's scheduler, on the CPU with a tiny
// brightness model so the batches are cheap and every mask is known: each request gets its own
// photo's cut-out back from a shared batch, a bad photo fails alone, an aborted request leaves
// its batch, the queue is bounded, and close waits for what runs.
import fs from 'node:fs';
import t from 'tap';
import sharp from 'sharp';
import { createRemovalPool } from '../../src/pool/pool.js';
import { IDLE_RELEASE_MS } from '../../src/pool/idle-release.js';
import { loadBinding } from '../../src/native/binding.js';
import { pollUntilAsync } from '../helpers/poll.js';
import { DEFAULT_OPTIONS, type RemoveOptions } from '../../src/domain/removal.js';
import type { RemoveResult } from '../../src/pool/protocol.js';
import type { BatchReport } from '../../src/pool/pool-api.js';
import { writeTinyBatchModel } from '../helpers/tiny-batch-model.js';

const model = writeTinyBatchModel();
const options: RemoveOptions = { ...DEFAULT_OPTIONS, refine: false, decontaminate: false };

/** A 320×240 black photo with a white 40×40 square at (x, y): the tiny model's subject. */
function photo(x: number, y: number): Promise<Buffer> {
  const square = { create: { width: 40, height: 40, channels: 3 as const, background: '#ffffff' } };
  return sharp({ create: { width: 320, height: 240, channels: 3, background: '#000000' } })
    .composite([{ input: square, left: x, top: y }])
    .png()
    .toBuffer();
}

async function pool(over: { maxBatch?: number; batchWaitMs?: number; maxQueue?: number; workers?: number; inferWorkers?: number; photoNice?: number } = {}) {
  return createRemovalPool({ model: 'isnet-fp16-batch', modelPath: model, device: 'cpu', warmUp: false, workers: 2, ...over });
}

function ok(r: RemoveResult): Extract<RemoveResult, { ok: true }> {
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r;
}

t.test('concurrent requests share batches and each gets its own photo back', async (t) => {
  const p = await pool({ maxBatch: 4, batchWaitMs: 200 });
  t.teardown(() => p.close());
  t.match(p.info, { model: 'brightness.onnx', batching: { maxBatch: 4, maxWaitMs: 200, inferWorkers: 1 } }, 'one inference worker by default');
  const spots = [
    [10, 10],
    [100, 20],
    [200, 150],
    [270, 190],
    [50, 180],
    [150, 100],
  ] as const;
  const results = await Promise.all(spots.map(async ([x, y]) => ok(await p.run({ input: await photo(x, y), options: { ...options } }))));
  results.forEach((r, i) => {
    const [x, y] = spots[i]!;
    t.equal(r.contentType, 'image/png');
    t.same([r.width, r.height], [320, 240]);
    // The box is the square give or take the mask's 1024² resampling.
    t.ok(Math.abs(r.foreground.left - x) <= 2 && Math.abs(r.foreground.top - y) <= 2, `request ${i}: its own square (${JSON.stringify(r.foreground)})`);
    t.ok(Math.abs(r.foreground.width - 40) <= 4 && Math.abs(r.foreground.height - 40) <= 4, `request ${i}: 40×40`);
    t.ok(r.timings.batch! >= 1 && r.timings.infer! >= 0, 'timings name the batch and the inference');
  });
  const stats = p.stats();
  t.ok(stats.batches! < spots.length, `${spots.length} photos ran in ${stats.batches} batches`);
  const px = await sharp(Buffer.from(results[0]!.data)).raw().toBuffer({ resolveWithObject: true });
  t.equal(px.info.channels, 4);
  const alphaAt = (x: number, y: number) => px.data[(y * 320 + x) * 4 + 3]!;
  t.ok(alphaAt(30, 30) > 240 && alphaAt(300, 220) < 10, 'opaque subject, transparent background');
});

t.test('one bad photo among good ones fails alone; an aborted request leaves its batch', async (t) => {
  const p = await pool({ maxBatch: 4, batchWaitMs: 300 });
  t.teardown(() => p.close());
  const abort = new AbortController();
  // The pool is below the edges that sniff (api/image-input.ts, lib/remove.ts): its worker refuses
  // what libvips reads as another format (a GIF) or cannot read at all (garbage, a truncated PNG).
  const gif = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#ffffff' } })
    .gif()
    .toBuffer();
  const runs = [
    p.run({ input: await photo(10, 10), options }),
    p.run({ input: gif, options }),
    p.run({ input: await photo(200, 100), options }, abort.signal),
    p.run({ input: Buffer.from((await photo(5, 5)).subarray(0, 200)), options }),
    p.run({ input: new Uint8Array(Buffer.from('definitely not an image')), options }),
    p.run({ input: await photo(100, 100), options }),
  ];
  abort.abort();
  const settled = await Promise.allSettled(runs);
  const summary = settled.map((s) => (s.status === 'rejected' ? (s.reason as { code: string }).code : s.value.ok ? 'ok' : s.value.code));
  t.same(summary, ['ok', 'invalid_file_type', 'aborted', 'failed_to_read_image', 'failed_to_read_image', 'ok']);
  const gifResult = settled[1]!;
  t.match(gifResult.status === 'fulfilled' && !gifResult.value.ok && gifResult.value.message, 'Expected jpg/png/webp, received gif');
});

t.test('admission is bounded (maxQueue beyond what runs) and close lets running work finish', async (t) => {
  const p = await pool({ maxBatch: 2, batchWaitMs: 0, maxQueue: 1, workers: 1, inferWorkers: 2 });
  const input = await photo(10, 10);
  // Capacity: 1 photo worker + 2 inference workers × 2 per batch = 5 running, +1 waiting.
  const runs = Array.from({ length: 6 }, () => p.run({ input: Buffer.from(input), options }));
  await t.rejects(p.run({ input: Buffer.from(input), options }), { code: 'queue_full' });
  const closing = p.close();
  const settled = await Promise.allSettled(runs);
  await closing;
  const codes = settled.map((s) => (s.status === 'fulfilled' ? (s.value.ok ? 'ok' : s.value.code) : (s.reason as { code: string }).code));
  t.ok(
    codes.every((c) => c === 'ok' || c === 'pool_closed'),
    `every request settled: ${codes.join(', ')}`,
  );
  t.ok(codes.includes('ok'), 'work already running finished');
  await t.rejects(p.run({ input: Buffer.from(input), options }), { code: 'pool_closed' });
});

t.test('composite scratch is kept while requests come and none once the pipeline has been empty a while', async (t) => {
  const binding = loadBinding();
  const p = await pool({ maxBatch: 2, batchWaitMs: 20, workers: 2 });
  binding.releaseScratch(); // what loading the model left: the test counts this pool's blocks
  const refined: RemoveOptions = { ...DEFAULT_OPTIONS }; // refinement, matting and decontamination use the cache
  const spots = [
    [10, 10],
    [100, 20],
    [200, 150],
    [270, 190],
  ] as const;
  const results = await Promise.all(spots.map(async ([x, y]) => p.run({ input: await photo(x, y), options: refined })));
  t.ok(
    results.every((r) => r.ok),
    'all four done',
  );
  const kept = binding.scratchCache().cached;
  t.ok(kept > 0, `the pipeline just emptied: ${kept} bytes kept for the next photo`);
  // The next request within the idle time finds them and restarts the clock.
  await new Promise((resolve) => setTimeout(resolve, IDLE_RELEASE_MS / 2));
  ok(await p.run({ input: await photo(50, 60), options: refined }));
  const lastDone = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_RELEASE_MS / 2));
  // Kept until one idle time after the last request; a test process stalled past that (a loaded box)
  // may rightly find it gone, so the claim is checked against the time that really passed.
  const cached = binding.scratchCache().cached,
    idleFor = performance.now() - lastDone;
  t.ok(
    cached > 0 || idleFor >= IDLE_RELEASE_MS,
    `still kept more than one idle time after the burst: the clock restarted with the last request (${cached} bytes, ${Math.round(idleFor)} ms since it)`,
  );
  // The release is a timer: on a loaded box it may fire late, so wait for it (up to three idle times).
  await pollUntilAsync(async () => binding.scratchCache().cached === 0, 'the kept scratch to go', IDLE_RELEASE_MS * 3);
  t.equal(binding.scratchCache().cached, 0, 'empty for longer than the idle time: every block handed back');
  await p.close();
  t.equal(binding.scratchCache().cached, 0, 'closed: nothing kept');
});

t.test('masks go back for the next batch to fill while requests come; dropped once idle', async (t) => {
  const binding = loadBinding();
  const reports: BatchReport[] = [];
  const p = await createRemovalPool({
    model: 'isnet-fp16-batch',
    modelPath: model,
    device: 'cpu',
    warmUp: false,
    workers: 2,
    maxBatch: 2,
    batchWaitMs: 0,
    onBatch: (b) => reports.push(b),
  });
  t.teardown(() => p.close());
  binding.releaseScratch();
  const refined: RemoveOptions = { ...DEFAULT_OPTIONS };
  const spots = [
    [10, 10],
    [100, 20],
    [200, 150],
    [270, 190],
  ] as const;
  for (const [x, y] of spots) {
    const r = ok(await p.run({ input: await photo(x, y), options: refined }));
    // A buffer filled again must hold this photo's mask, nothing of the last one's.
    t.ok(
      Math.abs(r.foreground.left - x) <= 2 && Math.abs(r.foreground.top - y) <= 2 && Math.abs(r.foreground.width - 40) <= 4,
      `(${x}, ${y}): its own square (${JSON.stringify(r.foreground)})`,
    );
  }
  t.same(
    reports.map((b) => [b.size, b.reused]),
    [
      [1, 0],
      [1, 1],
      [1, 1],
      [1, 1],
    ],
    "one photo after another: the first batch makes its mask, each later one fills the last photo's",
  );
  // The idle release drops them (and hands the scratch back: the sign that it ran).
  await pollUntilAsync(async () => binding.scratchCache().cached === 0, 'the idle release', IDLE_RELEASE_MS * 3);
  ok(await p.run({ input: await photo(60, 60), options: refined }));
  t.equal(reports.at(-1)!.reused, 0, 'after the idle release, a new mask again');
});

t.test('memoryRelease every-task: no mask is kept between requests', async (t) => {
  const reports: BatchReport[] = [];
  const p = await createRemovalPool({
    model: 'isnet-fp16-batch',
    modelPath: model,
    device: 'cpu',
    warmUp: false,
    workers: 2,
    maxBatch: 2,
    batchWaitMs: 0,
    memoryRelease: 'every-task',
    onBatch: (b) => reports.push(b),
  });
  t.teardown(() => p.close());
  for (const [x, y] of [
    [10, 10],
    [100, 20],
    [200, 150],
  ] as const) {
    const r = ok(await p.run({ input: await jpegPhoto(x, y), options: { ...options } }));
    t.ok(Math.abs(r.foreground.left - x) <= 2 && Math.abs(r.foreground.top - y) <= 2, `(${x}, ${y}): its own square`);
  }
  t.same(
    reports.map((b) => b.reused),
    [0, 0, 0],
    'every batch makes its masks afresh',
  );
});

/** photo(x, y) as a plain JPEG of `w`×`h` (the square scaled with it), decoded once by stage 1 and handed on. */
async function jpegPhoto(x: number, y: number, w = 320, h = 240): Promise<Buffer> {
  return sharp(await photo(x, y))
    .resize(w, h, { fit: 'fill' })
    .jpeg({ quality: 95 })
    .toBuffer();
}

t.test('photo memory goes round: plain JPEGs one after another, each its own cut-out, the bytes of a fresh pool', async (t) => {
  const reused = await pool({ maxBatch: 1, batchWaitMs: 0 });
  t.teardown(() => reused.close());
  const a = await jpegPhoto(30, 40);
  const b = await jpegPhoto(200, 150, 160, 120);
  const first = ok(await reused.run({ input: a, options: { ...options } }));
  const second = ok(await reused.run({ input: b, options: { ...options } })); // a smaller photo in a's memory
  const third = ok(await reused.run({ input: await jpegPhoto(250, 20), options: { ...options } }));
  const again = ok(await reused.run({ input: a, options: { ...options } })); // a again, in memory b and the third wrote
  t.same([second.width, second.height], [160, 120], 'the smaller photo at its own size');
  t.ok(
    Math.abs(second.foreground.left - 100) <= 2 && Math.abs(second.foreground.top - 75) <= 2,
    `the smaller photo: its own square (${JSON.stringify(second.foreground)})`,
  );
  t.ok(
    Math.abs(third.foreground.left - 250) <= 2 && Math.abs(third.foreground.top - 20) <= 2,
    `the third: its own square (${JSON.stringify(third.foreground)})`,
  );
  t.ok(Buffer.from(again.data).equals(Buffer.from(first.data)), 'the first photo again: the same PNG');
  const fresh = await pool({ maxBatch: 1, batchWaitMs: 0 });
  t.teardown(() => fresh.close());
  const alone = ok(await fresh.run({ input: b, options: { ...options } }));
  t.ok(Buffer.from(second.data).equals(Buffer.from(alone.data)), 'the smaller photo: the PNG a fresh pool makes of it');
});

t.test('closing with scratch kept hands it back at once', async (t) => {
  const binding = loadBinding();
  const p = await pool({ workers: 2 });
  ok(await p.run({ input: await photo(10, 10), options: { ...DEFAULT_OPTIONS } }));
  t.ok(binding.scratchCache().cached > 0, 'kept after the request');
  await p.close();
  t.equal(binding.scratchCache().cached, 0, 'closed: nothing kept, no idle time waited');
});

/** Nice value of each thread of this process, by thread id (/proc/self/task/<tid>/stat, field 19). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}

t.test(
  'photoNice: the photo workers run at that nice value, the main thread and the inference workers do not',
  { skip: process.platform !== 'linux' && 'per-thread nice values are Linux' },
  async (t) => {
    const before = new Set(threadNices().keys());
    const p = await pool({ workers: 2, photoNice: 7 });
    t.teardown(() => p.close());
    const r = ok(await p.run({ input: await photo(100, 50), options: { ...options } }));
    t.ok(Math.abs(r.foreground.left - 100) <= 2 && Math.abs(r.foreground.top - 50) <= 2, 'the photo still comes back cut out');
    // The pool does not wait for its photo workers to start: the one that did not take the photo may
    // still be loading its modules (a loaded CI box), so wait until both have set their nice value.
    const newThreads = () => [...threadNices()].filter(([tid]) => !before.has(tid));
    await pollUntilAsync(async () => newThreads().filter(([, n]) => n === 7).length >= 2, 'both photo workers at nice 7', 20_000).catch(() => undefined);
    const nices = threadNices();
    t.equal(nices.get(process.pid), 0, 'main thread at 0');
    const started = [...nices].filter(([tid]) => !before.has(tid));
    const at7 = started.filter(([, n]) => n === 7).length;
    // Two photo workers, each with the threads it started (libvips', the addon's); the two inference
    // workers and what they started (ONNX Runtime's) stay at 0.
    t.ok(at7 >= 2, `${at7} of the pool's ${started.length} new threads at nice 7`);
    t.ok(started.filter(([, n]) => n === 0).length >= 2, 'the inference workers at 0');
    t.same(new Set(started.map(([, n]) => n)), new Set([0, 7]), 'no other value');
  },
);
