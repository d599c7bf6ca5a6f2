// The memory estimate `cutout serve` prints: measured figures per model, scaled by the worker count.
import t from 'tap';
import {
  BASE_MB,
  EXTRA_WORKER_MB,
  FILE_OVERHEAD_MB,
  MODEL_MEMORY,
  estimateMemory,
  fileModelMemory,
  formatMemoryEstimate,
} from '../../src/pool/memory-estimate.js';
import { modelEntry } from '../../src/model/manifest.js';

t.test('one worker: base + the model loaded, plus its working memory at peak', async (t) => {
  const int8 = MODEL_MEMORY['isnet-int8']!;
  t.match(estimateMemory('isnet-int8', 1), {
    model: 'isnet-int8',
    workers: 1,
    idleMb: BASE_MB + int8.loadedMb,
    peakMb: BASE_MB + int8.loadedMb + int8.workMb.idle,
    perWorkerMb: EXTRA_WORKER_MB + int8.workMb.idle,
    measured: true,
  });
  t.equal(estimateMemory(undefined, 1).model, modelEntry().name, 'no model named: the manifest default');
});

t.test('the release policy: every-task plans for less memory busy, the same idle', async (t) => {
  const kept = estimateMemory('isnet-int8', 1);
  const lean = estimateMemory('isnet-int8', 1, 'every-task');
  t.equal(lean.idleMb, kept.idleMb);
  t.equal(lean.peakMb, BASE_MB + MODEL_MEMORY['isnet-int8']!.loadedMb + MODEL_MEMORY['isnet-int8']!.workMb['every-task']);
  t.ok(lean.peakMb < kept.peakMb, `${lean.peakMb} < ${kept.peakMb}`);
  t.equal(estimateMemory('isnet-int8', 1, 'idle').peakMb, kept.peakMb, "'idle' is the default");
});

t.test('workers share the model: each extra one adds its isolate idle and its working memory busy', async (t) => {
  const one = estimateMemory('isnet-fp32', 1);
  const three = estimateMemory('isnet-fp32', 3);
  t.equal(three.idleMb - one.idleMb, 2 * EXTRA_WORKER_MB);
  t.equal(three.peakMb - one.peakMb, 2 * one.perWorkerMb);
  t.equal(estimateMemory('isnet-int8', 0).workers, 1, 'at least one worker');
  t.ok(estimateMemory('isnet-int8', 1).peakMb < estimateMemory('isnet-fp32', 1).peakMb, 'int8 needs less than fp32');
});

t.test('a model without measured figures is counted as isnet-fp32 and says so', async (t) => {
  const e = estimateMemory('isnet-fp16', 2);
  t.equal(e.measured, false);
  t.equal(e.peakMb, estimateMemory('isnet-fp32', 2).peakMb);
  t.match(formatMemoryEstimate(e), /isnet-fp16, figures of isnet-fp32/);
});

t.test('the banner line', async (t) => {
  t.equal(
    formatMemoryEstimate({ model: 'isnet-int8', basis: 'isnet-int8', workers: 1, idleMb: 160, peakMb: 455, perWorkerMb: 310, measured: true }),
    'memory: ~160 MB idle, up to ~460 MB busy with 1 worker, +310 MB per extra worker (isnet-int8; docs/memory.md)',
  );
  t.match(formatMemoryEstimate(estimateMemory('isnet-int8', 2)), /busy with 2 workers/);
});

t.test("a model file of one's own: estimated from its size and its input, and said so", async (t) => {
  const MB = 1024 * 1024;
  // The bundled fp32 file as if it were one's own: the estimate lands near isnet-fp32's figures.
  const fp32 = MODEL_MEMORY['isnet-fp32']!;
  const asFile = fileModelMemory({ name: 'isnet-fp32.onnx', fileBytes: 168 * MB, inputWidth: 1024, inputHeight: 1024 });
  t.ok(Math.abs(asFile.loadedMb - fp32.loadedMb) <= 0.05 * fp32.loadedMb, `loaded ${asFile.loadedMb} vs ${fp32.loadedMb} MB measured`);
  t.same(asFile.workMb, fp32.workMb, 'working memory: the photo part plus ISNet-fp32 activations at 1024²');
  // A near-1 GB BiRefNet file: the weights dominate what is loaded.
  const big = estimateMemory({ name: 'birefnet.onnx', fileBytes: 930 * MB, inputWidth: 1024, inputHeight: 1024 }, 1);
  t.equal(big.idleMb, BASE_MB + FILE_OVERHEAD_MB + 930);
  t.equal(big.measured, false);
  t.equal(big.model, 'birefnet.onnx');
  t.match(formatMemoryEstimate(big), /\(birefnet\.onnx, estimated from its 930 MB file and 1024×1024 input; docs\/memory\.md\)$/);
  // fp16 weights are held widened to float32 on the CPU: the bundled fp16 file (84 MB, all but a few
  // KB of it fp16 weights) is estimated as the fp32 one is measured.
  const f16 = fileModelMemory({ name: 'isnet-fp16.onnx', fileBytes: 84 * MB, inputWidth: 1024, inputHeight: 1024, float16WeightBytes: 84 * MB });
  t.ok(Math.abs(f16.loadedMb - fp32.loadedMb) <= 0.05 * fp32.loadedMb, `fp16 file loaded ${f16.loadedMb} vs isnet-fp32 ${fp32.loadedMb} MB measured`);
  t.match(
    formatMemoryEstimate(estimateMemory({ name: 'isnet-fp16.onnx', fileBytes: 84 * MB, inputWidth: 1024, inputHeight: 1024, float16WeightBytes: 84 * MB }, 1)),
    /estimated from its 84 MB file \(fp16 weights counted as float32\) and 1024×1024 input/,
  );
  // A U²-Net at 320²: a tenth of the activations, the same photo buffers.
  const u2 = fileModelMemory({ name: 'u2net.onnx', fileBytes: 168 * MB, inputWidth: 320, inputHeight: 320 });
  t.ok(u2.workMb['every-task'] < fp32.workMb['every-task'] / 2, `u2net at 320²: ${u2.workMb['every-task']} MB a task`);
  t.ok(u2.workMb['every-task'] > 200, "still the photo's buffers");
  t.ok(u2.workMb.idle > u2.workMb['every-task'], "'idle' keeps the tensors: more busy");
  // Workers still share the one loaded copy.
  const three = estimateMemory({ name: 'u2net.onnx', fileBytes: 168 * MB, inputWidth: 320, inputHeight: 320 }, 3);
  t.equal(three.idleMb, BASE_MB + u2.loadedMb + 2 * EXTRA_WORKER_MB);
});
