// The Session's output conventions (native/src/postprocess.h): a family's sigmoid and min-max range
// applied in place on the session's own output tensor, and [1, H, W] outputs. A tiny model whose mask
// is the mean of the normalised channels makes every expected value computable here.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadBinding, type SessionOptions } from '../../src/native/binding.js';
import { loadOnnx } from '../../src/model/onnx-transform.js';

const binding = loadBinding();
const W = 16;
const H = 8;

/** x [1, 3, H, W] → ReduceMean over the channels → y: [1, 1, H, W], or [1, H, W] with `rank3`. */
function meanModel(dir: string, rank3: boolean): string {
  const onnx = loadOnnx();
  const vi = (name: string, dims: number[]) => onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: 1, shape: { dim: dims.map((d) => ({ dimValue: d })) } } } });
  const graph = onnx.GraphProto.create({
    name: 'mean',
    input: [vi('x', [1, 3, H, W])],
    output: [vi('y', rank3 ? [1, H, W] : [1, 1, H, W])],
    node: [
      onnx.NodeProto.create({
        opType: 'ReduceMean',
        input: ['x'],
        output: ['y'],
        attribute: [onnx.AttributeProto.create({ name: 'axes', type: 7, ints: [1] }), onnx.AttributeProto.create({ name: 'keepdims', type: 2, i: rank3 ? 0 : 1 })],
      }),
    ],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'cutout-tests', graph });
  const file = path.join(dir, rank3 ? 'mean3.onnx' : 'mean4.onnx');
  fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
  return file;
}

const base: SessionOptions = { threads: 1, inputName: 'x', outputName: 'y', width: W, height: H, mean: [100, 100, 100], std: [50, 50, 50] };

// Pixels from 0 to 255 across the image: the normalised means run from -2 to about 3.
const rgb = new Uint8Array(W * H * 3);
for (let i = 0; i < W * H; i++) {
  rgb[i * 3] = (i * 2) % 256;
  rgb[i * 3 + 1] = 255 - ((i * 3) % 256);
  rgb[i * 3 + 2] = Math.round((i / (W * H - 1)) * 255);
}
const raw = Array.from({ length: W * H }, (_, i) => ((rgb[i * 3]! - 100) / 50 + (rgb[i * 3 + 1]! - 100) / 50 + (rgb[i * 3 + 2]! - 100) / 50) / 3);
const sigmoid = (v: number) => 1 / (1 + Math.exp(-v));
const minmax = (vs: number[]) => {
  const lo = Math.min(...vs);
  const hi = Math.max(...vs);
  return vs.map((v) => (v - lo) / (hi - lo));
};

function maxDiff(a: Float32Array, b: number[]): number {
  let d = 0;
  for (let i = 0; i < b.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

t.test('activation and range, in place on the session-owned output', async (t) => {
  const dir = t.testdir();
  const file = meanModel(dir, false);
  const cases: [string, Partial<SessionOptions>, number[]][] = [
    ['none, unit (the default): the output as it is', {}, raw],
    ['sigmoid', { activation: 'sigmoid' }, raw.map(sigmoid)],
    ['minmax', { range: 'minmax' }, minmax(raw)],
    ['sigmoid then minmax', { activation: 'sigmoid', range: 'minmax' }, minmax(raw.map(sigmoid))],
  ];
  for (const [name, extra, expected] of cases) {
    const s = new binding.Session(file, { ...base, ...extra });
    const out = s.infer(rgb, 3);
    t.equal(out, s.outputTensor, `${name}: the session's own tensor, no copy`);
    t.ok(maxDiff(out, expected) < 1e-5, `${name}: max |Δ| ${maxDiff(out, expected).toExponential(2)}`);
    if (extra.range === 'minmax') t.same([Math.min(...out), Math.max(...out)], [0, 1], `${name}: spans 0..1`);
    s.close();
  }
});

t.test('a [1, H, W] output with outputRank 3', async (t) => {
  const dir = t.testdir();
  const file = meanModel(dir, true);
  const s = new binding.Session(file, { ...base, outputRank: 3, activation: 'sigmoid' });
  t.ok(maxDiff(s.infer(rgb, 3), raw.map(sigmoid)) < 1e-5);
  s.close();
  const wrong = new binding.Session(file, base);
  t.throws(() => wrong.infer(rgb, 3), { code: 'ERR_CUTOUT_INFERENCE' }, 'read as [1, 1, H, W] it fails in ONNX Runtime, not silently');
  wrong.close();
});

t.test('bad post-processing options are coded TypeErrors', async (t) => {
  const file = meanModel(t.testdir(), false);
  t.throws(() => new binding.Session(file, { ...base, activation: 'relu' as never }), {
    name: 'TypeError',
    code: 'ERR_CUTOUT_ARG',
    message: "Expected 'none' or 'sigmoid' for options.activation but received 'relu'",
  });
  t.throws(() => new binding.Session(file, { ...base, range: 1 as never }), { code: 'ERR_CUTOUT_ARG', message: "Expected 'unit' or 'minmax' for options.range but received a number" });
  t.throws(() => new binding.Session(file, { ...base, outputRank: 2 as never }), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => new binding.Session(file, { ...base, layout: 'chw' as never }), { code: 'ERR_CUTOUT_ARG', message: "Expected 'nchw' or 'nhwc' for options.layout but received 'chw'" });
});
