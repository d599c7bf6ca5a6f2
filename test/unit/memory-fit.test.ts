// Sizing the CPU path to a memory limit (src/pool/memory-fit.ts) with injected limits: fewer workers,
// then the memory-first policy; what the operator gave is kept, or refused with the limit and the estimate.
import t from 'tap';
import { decodeCeilingFor, fitToMemory, inputCeilingFor, MEMORY_LIMIT_SHARE, MemoryLimitError, MIN_DECODE_CEILING_BYTES } from '../../src/pool/memory-fit.js';
import { MAX_DECODE_BYTES_IN_FLIGHT, MAX_INPUT_BYTES_IN_MEMORY } from '../../src/domain/removal.js';
import { estimateMemory } from '../../src/pool/memory-estimate.js';
import { createRemovalPool } from '../../src/pool/pool.js';

const MB = 1024 * 1024;
const limit = (mb: number) => ({ bytes: mb * MB, source: 'cgroup v2 memory.max (/sys/fs/cgroup/test/memory.max)' });
const base = { model: 'isnet-int8', workers: 2, workersGiven: false, release: 'idle' as const, releaseGiven: false };

t.test('room enough: nothing changes', async (t) => {
  const fit = fitToMemory({ ...base, limit: limit(24_000) });
  t.match(fit, { ok: true, workers: 2, release: 'idle' });
  t.notOk(fit.ok && fit.changed, 'no banner line');
});

t.test('the default sizing shrinks to fit: fewer workers first, then every-task', async (t) => {
  const twoIdle = estimateMemory('isnet-int8', 2, 'idle').peakMb;
  const oneIdle = estimateMemory('isnet-int8', 1, 'idle').peakMb;
  const oneLean = estimateMemory('isnet-int8', 1, 'every-task').peakMb;
  t.ok(oneLean < oneIdle && oneIdle < twoIdle);
  const between = (a: number, b: number) => Math.ceil((a + b) / 2 / MEMORY_LIMIT_SHARE);

  const fewer = fitToMemory({ ...base, limit: limit(between(oneIdle, twoIdle)) });
  t.match(fewer, { ok: true, workers: 1, release: 'idle', changed: /^1 worker instead of 2 to fit the memory limit of \d+ MB \(cgroup v2 memory.max/ });

  const lean = fitToMemory({ ...base, limit: limit(600) }); // the limit of the fault report: 600 MB
  t.match(lean, {
    ok: true,
    workers: 1,
    release: 'every-task',
    changed: /1 worker instead of 2 and --memory-release every-task to fit the memory limit of 600 MB/,
  });
  t.ok(lean.ok && lean.estimate.peakMb <= 600 * MEMORY_LIMIT_SHARE, 'the estimate fits 90% of the limit');
});

t.test('an explicit --workers is kept or refused, naming the limit and the estimate', async (t) => {
  const refused = fitToMemory({ ...base, workersGiven: true, limit: limit(600) });
  t.equal(refused.ok, false);
  const message = refused.ok ? '' : refused.message;
  t.match(
    message,
    /~\d+ MB busy with 2 workers and --memory-release every-task \(isnet-int8, the start-up estimate\) is above the memory limit of 600 MB \(cgroup v2 memory.max/,
  );
  t.match(message, /fewer --workers/);
  t.match(
    fitToMemory({ ...base, workersGiven: true, limit: limit(1000) }),
    { ok: true, workers: 2, release: 'every-task' },
    'kept, with the lean policy where that fits',
  );
});

t.test('an explicit --memory-release is kept; nothing fits: refused', async (t) => {
  t.match(fitToMemory({ ...base, releaseGiven: true, limit: limit(600) }), {
    ok: false,
    message: /1 worker and --memory-release idle .* give --memory-release every-task, or a higher limit/,
  });
  t.match(fitToMemory({ ...base, limit: limit(300) }), {
    ok: false,
    message: /~\d+ MB busy with 1 worker and --memory-release every-task .* above the memory limit of 300 MB.*: give a higher limit$/,
  });
});

t.test('the pool refuses to start past the limit before any worker starts', async (t) => {
  await t.rejects(createRemovalPool({ device: 'cpu', model: 'isnet-int8', workers: 2, memoryLimit: limit(600) }), MemoryLimitError);
});

t.test('decodes sized to the limit: what the planned share leaves beside the idle process, within [64 MB, 1 GiB]', async (t) => {
  const idle = estimateMemory('isnet-int8', 1, 'every-task').idleMb;
  const lean = fitToMemory({ ...base, limit: limit(600) });
  t.ok(lean.ok);
  if (!lean.ok) return;
  t.equal(lean.decodeCeilingBytes, Math.floor(600 * MB * MEMORY_LIMIT_SHARE - idle * MB), '600 MB: 90% less the idle process');
  t.match(lean.changed, /; photo decodes up to \d+ MB at once \(a photo needing more is refused\)$/);
  const roomy = fitToMemory({ ...base, limit: limit(24_000) });
  t.ok(roomy.ok && roomy.decodeCeilingBytes === MAX_DECODE_BYTES_IN_FLIGHT, 'a roomy host keeps 1 GiB');
  t.equal(decodeCeilingFor(limit(100), estimateMemory('isnet-int8', 1, 'every-task')), MIN_DECODE_CEILING_BYTES, 'never below 64 MB');
  const justDecodes = fitToMemory({ ...base, workers: 1, limit: limit(1000) });
  t.match(
    justDecodes,
    {
      ok: true,
      workers: 1,
      release: 'idle',
      changed: /^photo decodes up to \d+ MB at once \(a photo needing more is refused\), to fit the memory limit of 1000 MB/,
    },
    'nothing else changed: the banner says only that',
  );
});

t.test(
  "request inputs (the queue's memory) sized to the limit: half of what the busy pool leaves, within [two bodies, 256 MB]; decodes get the rest",
  async (t) => {
    const twoBodies = 62 * MB;
    const inputs = { bytes: twoBodies, given: false };
    const lean = fitToMemory({ ...base, limit: limit(600), inputs });
    t.ok(lean.ok);
    if (!lean.ok) return;
    const room = 600 * MB * MEMORY_LIMIT_SHARE - lean.estimate.peakMb * MB;
    t.equal(lean.inputCeilingBytes, Math.max(twoBodies, Math.floor(room / 2)), '600 MB: half the room beside the busy pool, at least two bodies');
    t.ok(lean.inputCeilingBytes < MAX_INPUT_BYTES_IN_MEMORY, 'below the 256 MB default');
    t.ok(
      lean.estimate.peakMb * MB + lean.inputCeilingBytes <= 600 * MB * MEMORY_LIMIT_SHARE + twoBodies,
      'the busy pool and the inputs fit the planned share (or the floor does)',
    );
    t.equal(
      lean.decodeCeilingBytes,
      Math.floor(600 * MB * MEMORY_LIMIT_SHARE - lean.estimate.idleMb * MB - lean.inputCeilingBytes),
      'decodes: the planned share less the idle process and the inputs',
    );
    t.match(lean.changed, /; request bodies and downloads up to \d+ MB at once \(more get 503 service_busy\)$/);

    const roomy = fitToMemory({ ...base, limit: limit(24_000), inputs });
    t.ok(roomy.ok && roomy.inputCeilingBytes === MAX_INPUT_BYTES_IN_MEMORY && !roomy.changed, 'a roomy host keeps 256 MB and says nothing');
    const given = fitToMemory({ ...base, limit: limit(600), inputs: { bytes: 200 * MB, given: true } });
    t.ok(given.ok && given.inputCeilingBytes === 200 * MB, "the operator's --body-memory-bytes is kept");
    t.ok(
      given.ok &&
        given.decodeCeilingBytes === Math.max(MIN_DECODE_CEILING_BYTES, Math.floor(600 * MB * MEMORY_LIMIT_SHARE - given.estimate.idleMb * MB - 200 * MB)),
      "and taken out of the decodes' share",
    );
    t.equal(inputCeilingFor(limit(300), estimateMemory('isnet-int8', 1, 'every-task'), twoBodies), twoBodies, 'never below two of the largest bodies');
  },
);
