// Static int8 quantisation: the arithmetic, the self-widening histogram, the clip search, and the
// QDQ rewrite of a small real ONNX graph run by ONNX Runtime against its float original.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { activationTensors, Histogram, HISTOGRAM_BINS, percentileClipRange } from '../../src/model/calibration.js';
import { applyTransforms, type ModelError, verifyModelFile, sha256 } from '../../src/model/assemble.js';
import { decodeModel, encodeModel, loadOnnx } from '../../src/model/onnx-transform.js';
import { activationParams, quantizeInt8, quantizeWeights } from '../../src/model/quantize.js';

t.test('activation parameters cover the range and keep 0 exact', async (t) => {
  t.same(activationParams(0, 255), { scale: 1, zeroPoint: 0 }, 'relu-like range: zero point 0');
  const p = activationParams(-0.5, 0.49609375);
  t.equal(p.zeroPoint, 128, 'model input (v-128)/256: zero point 128');
  t.ok(Math.abs(p.scale - 1 / 256) < 1e-6, 'one code per input level');
  t.same(activationParams(2, 10).zeroPoint, 0, 'a range above 0 is widened down to 0');
  t.equal(activationParams(-10, -2).zeroPoint, 255, 'a range below 0 is widened up to 0');
  t.ok(activationParams(0, 0).scale > 0, 'an all-zero tensor still gets a usable scale');
});

t.test('weights are symmetric int8 per output channel', async (t) => {
  const w = new Float32Array([1, -0.5, 0.25, 0, /* channel 1 */ 0.021, -0.04, 0.01, 0.03]);
  const { codes, scales } = quantizeWeights(w, 2);
  t.ok(Math.abs(scales[0]! - 1 / 127) < 1e-9);
  t.ok(Math.abs(scales[1]! - 0.04 / 127) < 1e-9, 'each channel has its own scale');
  t.same(Array.from(codes), [127, -64, 32, 0, 67, -127, 32, 95]);
  const zero = quantizeWeights(new Float32Array(4), 1);
  t.same(Array.from(zero.codes), [0, 0, 0, 0], 'an all-zero channel stays zero');
  t.ok(zero.scales[0]! > 0);
});

t.test('histogram widens without losing mass and turns signed when needed', async (t) => {
  const h = new Histogram();
  h.add([0, 1, 2, 3]);
  t.equal(h.limit, 3);
  t.notOk(h.signed);
  h.add([10, 12]);
  t.equal(h.limit, 12, 'doubled until 12 fits (3 → 6 → 12)');
  h.add([-5]);
  t.ok(h.signed);
  t.equal(h.min, -5);
  t.equal(h.max, 12);
  const total = h.counts.reduce((a, b) => a + b, 0);
  t.ok(Math.abs(total - 3) < 1e-9, 'each add() weighs 1 whatever its length');
  // The 12 lands in the top bin, -5 in a bin centred within one bin width of -5.
  t.ok(h.counts[HISTOGRAM_BINS - 1]! > 0);
  const width = (2 * h.limit) / HISTOGRAM_BINS;
  const negative = [...h.counts.keys()].filter((i) => h.counts[i]! > 0 && h.centre(i) < 0);
  t.equal(negative.length, 1);
  t.ok(Math.abs(h.centre(negative[0]!) + 5) <= width);
});

t.test('percentile clip drops the rarest values on each side', async (t) => {
  // 100000 values evenly over 0..10 plus 5 outliers at 1000 (0.005%): the 99.99% quantile ignores them.
  const h = new Histogram();
  h.add(Float32Array.from([...Array.from({ length: 100000 }, (_, i) => (i / 99999) * 10), 1000, 1000, 1000, 1000, 1000]));
  const [lo, hi] = percentileClipRange(h, 0.9999);
  t.equal(lo, 0, 'a tensor never negative keeps 0 as its floor');
  const width = h.limit / HISTOGRAM_BINS;
  t.ok(hi >= 10 - width && hi <= 10 + 2 * width, `hi ${hi.toFixed(3)} sits at the top of the bulk`);
  t.equal(percentileClipRange(h, 1)[1], 1000, 'q = 1 keeps the whole range');
  // Signed: symmetric bulk over -1..1 with outliers both ways.
  const s = new Histogram();
  s.add(Float32Array.from([...Array.from({ length: 100000 }, (_, i) => (i / 99999) * 2 - 1), -50, 50]));
  const [slo, shi] = percentileClipRange(s, 0.9999);
  const sw = (2 * s.limit) / HISTOGRAM_BINS;
  t.ok(slo <= -1 + sw && slo >= -1 - 2 * sw, `lo ${slo.toFixed(3)}`);
  t.ok(shi >= 1 - sw && shi <= 1 + 2 * sw, `hi ${shi.toFixed(3)}`);
  t.same(percentileClipRange(new Histogram()), [0, 0], 'an empty histogram gives an empty range');
});

/**
 * A 1×2×6×6 input → Conv 3×3 (4 ch) → Relu → Cast to float (a no-op, as left by fp16 widening) →
 * MaxPool → Conv 1×1 (1 ch) → Sigmoid, with the Cast listed last (not in topological order), as in
 * the real model.
 */
function tinyModel(): Uint8Array {
  const onnx = loadOnnx();
  const rng = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const r = rng(7);
  const tensor = (name: string, dims: number[], n: number) =>
    onnx.TensorProto.create({ name, dataType: 1, dims, rawData: new Uint8Array(Float32Array.from({ length: n }, r).buffer) });
  const attr = (name: string, ints: number[]) => onnx.AttributeProto.create({ name, type: 7, ints });
  const graph = onnx.GraphProto.create({
    name: 'tiny',
    input: [onnx.ValueInfoProto.create({ name: 'input', type: { tensorType: { elemType: 1, shape: { dim: [1, 2, 6, 6].map((d) => ({ dimValue: d })) } } } })],
    output: [onnx.ValueInfoProto.create({ name: 'output', type: { tensorType: { elemType: 1 } } })],
    initializer: [tensor('w1', [4, 2, 3, 3], 72), tensor('b1', [4], 4), tensor('w2', [1, 4, 1, 1], 4), tensor('b2', [1], 1)],
    node: [
      onnx.NodeProto.create({ opType: 'Conv', name: 'c1', input: ['input', 'w1', 'b1'], output: ['c1.out'], attribute: [attr('pads', [1, 1, 1, 1])] }),
      onnx.NodeProto.create({ opType: 'Relu', name: 'r1', input: ['c1.out'], output: ['r1.out'] }),
      onnx.NodeProto.create({
        opType: 'MaxPool',
        name: 'p1',
        input: ['r1.cast'],
        output: ['p1.out'],
        attribute: [attr('kernel_shape', [2, 2]), attr('strides', [2, 2])],
      }),
      onnx.NodeProto.create({ opType: 'Conv', name: 'c2', input: ['p1.out', 'w2', 'b2'], output: ['c2.out'] }),
      onnx.NodeProto.create({ opType: 'Sigmoid', name: 's', input: ['c2.out'], output: ['output'] }),
      onnx.NodeProto.create({
        opType: 'Cast',
        name: 'cast',
        input: ['r1.out'],
        output: ['r1.cast'],
        attribute: [onnx.AttributeProto.create({ name: 'to', type: 2, i: 1 })],
      }),
    ],
  });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 15 }], graph })).finish();
}

t.test('QDQ rewrite of a real graph runs in ONNX Runtime close to the float model', async (t) => {
  const ort = (await import('onnxruntime-node')).default;
  const floatBytes = tinyModel();
  const names = activationTensors(decodeModel(floatBytes));
  t.same(names, ['input', 'r1.out', 'p1.out'], 'conv inputs and relu outputs, in graph order');

  const x = Float32Array.from({ length: 72 }, (_, i) => Math.sin(i * 0.7) * 0.5);
  // U8U8 products: on x86 CPUs without VNNI, ONNX Runtime's default U8S8 kernels add pairs of
  // products in saturating 16-bit lanes, and this tiny model's full-range weights and inputs saturate
  // them (max |Δ| 0.065 on an AVX2-only box). This test checks the rewrite, not the CPU's kernels.
  const run = async (bytes: Uint8Array, outputs: string[]) => {
    const s = await ort.InferenceSession.create(bytes, { extra: { session: { x64quantprecision: '1' } } });
    const res = await s.run({ input: new ort.Tensor('float32', x, [1, 2, 6, 6]) }, outputs);
    await s.release();
    return res;
  };
  // Ranges measured on this very input, as the calibration tool would.
  const probe = decodeModel(floatBytes);
  for (const n of names.filter((n) => n !== 'input'))
    probe.graph.output.push(loadOnnx().ValueInfoProto.create({ name: n, type: { tensorType: { elemType: 1 } } }));
  const measured = await run(encodeModel(probe), ['output', ...names.filter((n) => n !== 'input')]);
  const ranges: Record<string, [number, number]> = { input: [-0.5, 0.5] };
  for (const n of names.filter((n) => n !== 'input')) {
    const d = measured[n]!.data as Float32Array;
    ranges[n] = [Math.min(...d), Math.max(...d)];
  }

  const model = decodeModel(floatBytes);
  const stats = quantizeInt8(model, { description: 'test', float: [], ranges });
  t.same(stats, { convs: 2, floatConvs: 0, relusFolded: 1, int8Ops: 1, identityCastsRemoved: 1 });
  const ops = model.graph.node.map((n: { opType: string }) => n.opType);
  t.notOk(ops.includes('Relu'), 'the Relu is folded into the zero-point-0 quantiser');
  t.notOk(ops.includes('Cast'), 'the no-op cast is gone');
  t.equal(ops.filter((o: string) => o === 'QuantizeLinear').length, 3, 'input, conv1 output, pooled tensor');
  const q = model.graph.node.filter((n: { opType: string }) => n.opType === 'QuantizeLinear');
  const init = (name: string) => Array.from(model.graph.initializer.find((x: { name: string }) => x.name === name).rawData as Uint8Array);
  t.same(q[2].input.slice(1).map(init), q[1].input.slice(1).map(init), "the MaxPool output reuses its input's scale and zero point (runs on uint8)");
  t.notSame(q[1].input.slice(1).map(init), q[0].input.slice(1).map(init), 'other tensors have their own');
  const producedAt = new Map<string, number>();
  model.graph.node.forEach((n: { output: string[] }, i: number) => n.output.forEach((o) => producedAt.set(o, i)));
  t.ok(
    model.graph.node.every((n: { input: string[] }, i: number) => n.input.every((x) => (producedAt.get(x) ?? -1) < i)),
    'rewritten graph is in topological order',
  );
  const int8 = encodeModel(model);
  t.ok(int8.byteLength > 0);

  const want = measured.output!.data as Float32Array;
  const got = (await run(int8, ['output'])).output!.data as Float32Array;
  t.equal(got.length, want.length);
  const maxDiff = Math.max(...Array.from(got, (v, i) => Math.abs(v - want[i]!)));
  t.ok(maxDiff < 0.02, `int8 output within 0.02 of float (max |Δ| ${maxDiff.toFixed(4)})`);
  t.ok(maxDiff > 0, 'and it really is a different (quantised) computation');

  const kept = decodeModel(floatBytes);
  t.same(
    quantizeInt8(kept, { description: 'test', float: ['c2'], ranges }),
    { convs: 1, floatConvs: 1, relusFolded: 1, int8Ops: 1, identityCastsRemoved: 1 },
    'listed convs stay float',
  );
  t.throws(() => quantizeInt8(decodeModel(floatBytes), { description: 'test', float: [], ranges: { input: [0, 1] } }), /no range for tensor 'r1.out'/);
});

t.test('a missing or altered model file is named with its expected hash', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-model-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'm.onnx');
  const expected = sha256(new Uint8Array([1, 2, 3]));
  t.throws(() => verifyModelFile(file, expected), { code: 'model_missing', message: new RegExp(`${file}.*${expected}`) });
  fs.writeFileSync(file, new Uint8Array([1, 2, 4]));
  const err = (() => {
    try {
      verifyModelFile(file, expected);
    } catch (e) {
      return e as ModelError;
    }
    return undefined;
  })();
  t.equal(err?.code, 'model_corrupt');
  t.match(err?.message, file);
  t.match(err?.message, expected);
  fs.writeFileSync(file, new Uint8Array([1, 2, 3]));
  t.doesNotThrow(() => verifyModelFile(file, expected));
});

t.test('a manifest naming a missing calibration table or an unknown transform fails clearly', async (t) => {
  const bytes = tinyModel();
  t.throws(() => applyTransforms(bytes, ['quantize-int8:no-such-table.json']), {
    code: 'model_source_missing',
    message: /Calibration table .*no-such-table\.json is missing/,
  });
  t.throws(() => applyTransforms(bytes, ['quantize-int4:x.json']), /Unknown model transform 'quantize-int4:x.json'/);
});
