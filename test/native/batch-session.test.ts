// BatchSession (native/src/batch_session.cc): several photos in one run, each mask back in its own
// transferable buffer, batches padded to buckets, and the model contract and bad calls refused with
// coded errors. On the CPU with a tiny brightness model (test/helpers/tiny-batch-model.ts), and once
// with the real fp16 batch model against the fp32 reference.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { ADDON_PATH, loadBinding, sessionOptionsFor, type BatchSessionOptions } from '../../src/native/binding.js';
import { modelEntry } from '../../src/model/manifest.js';
import { assembleModel } from '../../src/model/assemble.js';
import { writeTinyBatchModel } from '../helpers/tiny-batch-model.js';
import { loadOnnx } from '../../src/model/onnx-transform.js';

const binding = loadBinding();
const W = 64;
const H = 48;
const tiny = writeTinyBatchModel(W, H);
const options = (over: Partial<BatchSessionOptions> = {}): BatchSessionOptions => ({
  threads: 1,
  inputName: 'pixels',
  outputName: 'output',
  width: W,
  height: H,
  mean: [0, 0, 0],
  std: [1, 1, 1],
  maxBatch: 6,
  ...over,
});

/** An H×W×3 image: value v everywhere, and 255 in the square [x0, x0+8) × [y0, y0+8). */
function image(v: number, x0: number, y0: number): Uint8Array {
  const px = new Uint8Array(W * H * 3).fill(v);
  for (let y = y0; y < y0 + 8; y++) for (let x = x0; x < x0 + 8; x++) px.fill(255, (y * W + x) * 3, (y * W + x) * 3 + 3);
  return px;
}

t.test("outputs: masks written into the buffers handed in (an earlier batch's), the rest new; bad ones refused", async (t) => {
  const s = new binding.BatchSession(tiny, options());
  t.teardown(() => s.close());
  const imgs = [image(0, 0, 0), image(51, 20, 10), image(102, 50, 30)];
  const fresh = s.run(imgs);
  const handed = [new Float32Array(W * H).fill(7), new Float32Array(W * H).fill(-3)];
  const masks = s.run(imgs, handed);
  t.equal(masks.length, 3);
  t.equal(masks[0], handed[0], 'the first mask is the first buffer handed in');
  t.equal(masks[1], handed[1], 'the second, the second');
  t.not(masks[2]!.buffer, handed[0]!.buffer, 'the third, with none handed in for it, a new one');
  t.not(masks[2]!.buffer, handed[1]!.buffer);
  masks.forEach((m, i) => t.same(m, fresh[i], `mask ${i}: the same values as into a new buffer (nothing left of the old contents)`));
  t.same(s.run([imgs[2]!], [handed[0]!, handed[1]!])[0], fresh[2], 'more outputs than images: the extra ones untouched');
  t.same(handed[1], fresh[1], 'the extra one kept what it had');
  t.same(s.run(imgs, [])[1], fresh[1], 'none handed in: all new');
  t.throws(() => s.run(imgs, [new Float32Array(W * H - 1)]), { code: 'ERR_CUTOUT_BAD_LENGTH' }, 'a buffer of the wrong length');
  t.throws(() => s.run(imgs, [new Uint8Array(W * H * 4) as unknown as Float32Array]), { code: 'ERR_CUTOUT_ARG' }, 'not a Float32Array');
  t.throws(() => s.run(imgs, 'x' as unknown as Float32Array[]), { code: 'ERR_CUTOUT_ARG' }, 'not an array');
  const detached = new Float32Array(W * H);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  t.throws(() => s.run(imgs, [detached]), { code: 'ERR_CUTOUT_BAD_LENGTH' }, 'a detached one (length 0)');
  t.same(s.run(imgs)[0], fresh[0], 'the session still runs after the refusals');
});

t.test('each photo of a batch gets its own mask, in order, in its own buffer', async (t) => {
  const s = new binding.BatchSession(tiny, options());
  t.teardown(() => s.close());
  t.same(s.buckets, [1, 2, 4, 6], 'powers of two up to maxBatch, and maxBatch');
  t.equal(s.pinned, false, 'no pinned memory on the CPU');
  t.equal(s.pinnedError, null, 'nothing given up');
  const imgs = [image(0, 0, 0), image(51, 20, 10), image(102, 50, 30)];
  const masks = s.run(imgs);
  t.equal(masks.length, 3);
  imgs.forEach((img, i) => {
    const m = masks[i]!;
    t.equal(m.length, W * H, `mask ${i} is ${W}×${H}`);
    t.equal(m.byteOffset, 0);
    t.equal(m.buffer.byteLength, W * H * 4, `mask ${i} owns its whole ArrayBuffer`);
    let worst = 0;
    for (let p = 0; p < W * H; p++) worst = Math.max(worst, Math.abs(m[p]! - img[p * 3]! / 255));
    t.ok(worst < 1e-6, `mask ${i} is that photo's brightness (worst error ${worst})`);
  });
  t.not(masks[0]!.buffer, masks[1]!.buffer, 'separate buffers');
  const moved = structuredClone(masks[0]!, { transfer: [masks[0]!.buffer as ArrayBuffer] });
  t.equal(masks[0]!.byteLength, 0, 'a mask transfers (its buffer is detached here)');
  t.equal(moved[0], 1, 'and arrives intact');
  t.same(s.run([imgs[1]!])[0], masks[1], 'the same photo alone (bucket 1) gives the same mask as in a batch of 3 (bucket 4)');
  t.same(s.warmUp().length, 4, 'warmUp runs every bucket');
});

t.test('bad calls and models are refused with coded errors', async (t) => {
  const s = new binding.BatchSession(tiny, options({ maxBatch: 2 }));
  t.teardown(() => s.close());
  const good = image(0, 0, 0);
  t.throws(() => s.run([]), { code: 'ERR_CUTOUT_ARG', message: /Expected 1 to 2 images but received 0/ });
  t.throws(() => s.run([good, good, good]), { code: 'ERR_CUTOUT_ARG', message: /Expected 1 to 2 images but received 3/ });
  t.throws(() => s.run([good, good.subarray(1)]), { code: 'ERR_CUTOUT_BAD_LENGTH', message: /for images\[1\]/ });
  t.throws(() => s.run([new Float32Array(W * H * 3) as never]), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => s.run('x' as never), { code: 'ERR_CUTOUT_ARG' });
  const detached = new Uint8Array(W * H * 3);
  structuredClone(detached, { transfer: [detached.buffer as ArrayBuffer] });
  t.throws(() => s.run([detached]), { code: 'ERR_CUTOUT_DETACHED' });
  s.close();
  t.throws(() => s.run([good]), { code: 'ERR_CUTOUT_CLOSED' });

  t.throws(() => new binding.BatchSession(tiny, options({ maxBatch: 0 })), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => new binding.BatchSession(tiny, options({ width: W + 1 })), { code: 'ERR_CUTOUT_MODEL_LOAD', message: /must be uint8 \[N, 48, 65, 3\]/ });
  t.throws(() => new binding.BatchSession(tiny, options({ inputName: 'input' })), { code: 'ERR_CUTOUT_MODEL_LOAD', message: /no input named 'input'/ });
  const fp32 = modelEntry('isnet-fp32');
  t.throws(
    () => new binding.BatchSession(fp32.path, { ...sessionOptionsFor(fp32.entry, 1), maxBatch: 2 }),
    {
      code: 'ERR_CUTOUT_MODEL_LOAD',
      message: /not type 1 \[1, 3, 1024, 1024\]/,
    },
    'a fixed-batch float model is not a batch model',
  );
  t.throws(() => new binding.BatchSession('/nonexistent.onnx', options()), { code: 'ERR_CUTOUT_MODEL_MISSING' });
  t.throws(() => new binding.BatchSession(tiny, options({ device: 'gpu' as never })), { code: 'ERR_CUTOUT_ARG', message: /'cpu' or 'cuda'/ });
  t.throws(() => new binding.BatchSession(tiny, options({ device: 'cuda', cudaOptions: 'device_id' })), { code: 'ERR_CUTOUT_ARG', message: /key=value/ });
});

t.test('cuda without the provider: ERR_CUTOUT_CUDA naming the missing library', async (t) => {
  const libDir = path.dirname(ADDON_PATH);
  if (fs.existsSync(`${libDir}/libonnxruntime_providers_shared.so`)) {
    t.comment('the CUDA provider is installed here: the GPU script covers this path');
    t.pass('provider present');
    return;
  }
  t.throws(() => new binding.BatchSession(tiny, options({ device: 'cuda' })), {
    code: 'ERR_CUTOUT_CUDA',
    message: /CUDA execution provider could not be loaded: .*libonnxruntime_providers_shared\.so/,
  });
});

t.test('the fp16 batch model agrees with the fp32 reference (CPU)', async (t) => {
  const manifest = modelEntry('isnet-fp16-batch');
  assembleModel(manifest.name, manifest.entry);
  const s = new binding.BatchSession(manifest.path, { ...sessionOptionsFor(manifest.entry, 2), maxBatch: 1 });
  t.teardown(() => s.close());
  const ref = modelEntry('isnet-fp32');
  const session = new binding.Session(ref.path, sessionOptionsFor(ref.entry, 2));
  t.teardown(() => session.close());
  // A smooth synthetic photo: a bright disc on a gradient.
  const n = 1024;
  const px = new Uint8Array(n * n * 3);
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      const inside = (x - 512) ** 2 + (y - 560) ** 2 < 300 ** 2;
      px.fill(inside ? 230 : Math.round((x / n) * 90), (y * n + x) * 3, (y * n + x) * 3 + 3);
    }
  const [mask] = s.run([px]);
  const expected = session.infer(px, 3);
  let inter = 0;
  let union = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = expected[i]! > 0.5;
    const b = mask![i]! > 0.5;
    inter += a && b ? 1 : 0;
    union += a || b ? 1 : 0;
  }
  t.ok(union > 0 && inter / union >= 0.98, `IoU ${(inter / union).toFixed(4)} against fp32`);
});

/**
 * A model file's conventions with a symbolic batch: x [N, 3, H, W] (or [N, H, W, 3]), float32 or
 * float16 → blue channel as the mask, y [N, 1, H, W] or [N, H, W] of the same type.
 */
function fileStyleModel(dir: string, spec: { half: boolean; nhwc: boolean; rank3: boolean }): string {
  const onnx = loadOnnx();
  const type = spec.half ? 10 : 1;
  const dims = (d: (number | string)[]) => ({ dim: d.map((v) => (typeof v === 'number' ? { dimValue: v } : { dimParam: v })) });
  const vi = (name: string, d: (number | string)[]) => onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: type, shape: dims(d) } } });
  const i64 = (name: string, v: number[]) =>
    onnx.TensorProto.create({ name, dataType: 7, dims: [v.length], rawData: new Uint8Array(new BigInt64Array(v.map(BigInt)).buffer) });
  const node = (opType: string, input: string[], output: string[], attribute: unknown[] = []) => onnx.NodeProto.create({ opType, input, output, attribute });
  const nodes = [
    ...(spec.nhwc ? [node('Transpose', ['x'], ['nchw'], [onnx.AttributeProto.create({ name: 'perm', type: 7, ints: [0, 3, 1, 2] })])] : []),
    node('Slice', [spec.nhwc ? 'nchw' : 'x', 'start', 'end', 'axis'], [spec.rank3 ? 'blue' : 'y']),
    ...(spec.rank3 ? [node('Squeeze', ['blue', 'axis'], ['y'])] : []),
  ];
  const graph = onnx.GraphProto.create({
    name: 'file-style',
    input: [vi('x', spec.nhwc ? ['N', H, W, 3] : ['N', 3, H, W])],
    output: [vi('y', spec.rank3 ? ['N', H, W] : ['N', 1, H, W])],
    initializer: [i64('start', [2]), i64('end', [3]), i64('axis', [1])],
    node: nodes,
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'cutout-tests', graph });
  const file = path.join(dir, `file-${spec.half ? 'f16' : 'f32'}-${spec.nhwc ? 'nhwc' : 'nchw'}-${spec.rank3 ? 3 : 4}.onnx`);
  fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
  return file;
}

t.test('a model file with a symbolic batch: each photo normalised into its slot, each mask as Session gives it', async (t) => {
  const dir = t.testdir();
  const imgs = [image(0, 0, 0), image(51, 20, 10), image(102, 50, 30)];
  for (const half of [false, true]) {
    for (const [nhwc, rank3] of [
      [false, false],
      [true, true],
    ] as const) {
      const file = fileStyleModel(dir, { half, nhwc, rank3 });
      const what = `${half ? 'float16' : 'float32'} ${nhwc ? 'NHWC' : 'NCHW'}, rank ${rank3 ? 3 : 4}`;
      // A family's conventions: mean and std in byte units, sigmoid then min-max (each photo's own).
      const conventions: Partial<BatchSessionOptions> = {
        inputName: 'x',
        outputName: 'y',
        mean: [10, 20, 30],
        std: [60, 70, 80],
        activation: 'sigmoid',
        range: 'minmax',
        ...(nhwc ? { layout: 'nhwc' as const } : {}),
        ...(rank3 ? { outputRank: 3 as const } : {}),
        ...(half ? { inputType: 'float16' as const, outputType: 'float16' as const } : {}),
      };
      const batch = new binding.BatchSession(file, options(conventions));
      const single = new binding.Session(file, options(conventions));
      const masks = batch.run(imgs);
      imgs.forEach((img, i) => {
        t.same(Array.from(masks[i]!), Array.from(single.infer(img, 3)), `${what}: photo ${i} of the batch is Session's mask`);
        t.same([Math.min(...masks[i]!), Math.max(...masks[i]!)], [0, 1], `${what}: photo ${i} min-max on its own`);
      });
      t.equal(masks[0]!.buffer.byteLength, W * H * 4, `${what}: a float32 mask in its own buffer`);
      t.same(batch.warmUp().length, 4, `${what}: every bucket runs`);
      batch.close();
      single.close();
    }
  }
  // Told the wrong type, or a fixed batch: refused at construction, naming what the model has.
  const f32 = fileStyleModel(dir, { half: false, nhwc: false, rank3: false });
  t.throws(() => new binding.BatchSession(f32, options({ inputName: 'x', outputName: 'y', inputType: 'float16' })), {
    code: 'ERR_CUTOUT_MODEL_LOAD',
    message: /input 'x' must be float16 \[N, 3, 48, 64\] with a symbolic batch dimension .*not type 1 \[N, 3, 48, 64\]/,
  });
  t.throws(() => new binding.BatchSession(f32, options({ inputName: 'x', outputName: 'y', outputRank: 3 })), {
    code: 'ERR_CUTOUT_MODEL_LOAD',
    message: /output 'y' must be one mask per image with a symbolic batch, \[N, 48, 64\], not \[N, 1, 48, 64\]/,
  });
  t.throws(() => new binding.BatchSession(f32, options({ inputName: 'x', outputName: 'y', std: [1, 0, 1] })), {
    code: 'ERR_CUTOUT_ARG',
    message: /positive numbers in options.std/,
  });
});
