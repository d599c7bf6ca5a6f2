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
  const vi = (name: string, dims: number[]) =>
    onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: 1, shape: { dim: dims.map((d) => ({ dimValue: d })) } } } });
  const graph = onnx.GraphProto.create({
    name: 'mean',
    input: [vi('x', [1, 3, H, W])],
    output: [vi('y', rank3 ? [1, H, W] : [1, 1, H, W])],
    node: [
      onnx.NodeProto.create({
        opType: 'ReduceMean',
        input: ['x'],
        output: ['y'],
        attribute: [
          onnx.AttributeProto.create({ name: 'axes', type: 7, ints: [1] }),
          onnx.AttributeProto.create({ name: 'keepdims', type: 2, i: rank3 ? 0 : 1 }),
        ],
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
  t.throws(() => new binding.Session(file, { ...base, range: 1 as never }), {
    code: 'ERR_CUTOUT_ARG',
    message: "Expected 'unit' or 'minmax' for options.range but received a number",
  });
  t.throws(() => new binding.Session(file, { ...base, outputRank: 2 as never }), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => new binding.Session(file, { ...base, layout: 'chw' as never }), {
    code: 'ERR_CUTOUT_ARG',
    message: "Expected 'nchw' or 'nhwc' for options.layout but received 'chw'",
  });
});

/** The nearest float16 to x (ties to even), as a number: x's binary exponent keeps 11 significant bits. */
function toHalf(x: number): number {
  if (x === 0) return 0;
  const exp = Math.max(Math.floor(Math.log2(Math.abs(x))), -14); // below 2^-14 the step stays 2^-24
  const step = 2 ** (exp - 10);
  const q = x / step;
  const r = Math.abs(q - Math.trunc(q)) === 0.5 ? 2 * Math.round(q / 2) : Math.round(q);
  return r * step;
}

/**
 * Channel 2 (blue, the tensor's last values) of the input as the mask, with float16 at either end: x
 * (float16 or float32) → Cast to float32 → Slice channel 2 → (Cast to float16) → y. What comes out is what the session fed in.
 */
function channelModel(dir: string, halfIn: boolean, halfOut: boolean, w: number, h: number): string {
  const onnx = loadOnnx();
  const vi = (name: string, elemType: number, dims: number[]) =>
    onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType, shape: { dim: dims.map((d) => ({ dimValue: d })) } } } });
  const i64 = (name: string, v: number) =>
    onnx.TensorProto.create({ name, dataType: 7, dims: [1], rawData: new Uint8Array(new BigInt64Array([BigInt(v)]).buffer) });
  const cast = (from: string, to: string, type: number) =>
    onnx.NodeProto.create({ opType: 'Cast', input: [from], output: [to], attribute: [onnx.AttributeProto.create({ name: 'to', type: 2, i: type })] });
  const graph = onnx.GraphProto.create({
    name: 'channel',
    input: [vi('x', halfIn ? 10 : 1, [1, 3, h, w])],
    output: [vi('y', halfOut ? 10 : 1, [1, 1, h, w])],
    initializer: [i64('start', 2), i64('end', 3), i64('axis', 1)],
    node: [
      cast('x', 'xf', 1),
      onnx.NodeProto.create({ opType: 'Slice', input: ['xf', 'start', 'end', 'axis'], output: [halfOut ? 'yf' : 'y'] }),
      ...(halfOut ? [cast('yf', 'y', 10)] : []),
    ],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'cutout-tests', graph });
  const file = path.join(dir, `channel-${w}x${h}-${halfIn ? 'f16' : 'f32'}-${halfOut ? 'f16' : 'f32'}.onnx`);
  fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
  return file;
}

t.test('float16 input and output tensors: converted at both ends, rounded to nearest even', async (t) => {
  const dir = t.testdir();
  // Two sizes: 16×8 (whole groups of eight, F16C where the build has it) and 5×3 (45 input values, the
  // last 5 of them blue, and 15 output values: the scalar tails too). Two scales: v / 3, values float16 cannot hold exactly, and v / 1e6, down in
  // float16's subnormals (below 2^-14) where the step is 2^-24.
  for (const [w, h] of [
    [W, H],
    [5, 3],
  ] as const) {
    const pixels = new Uint8Array(w * h * 3);
    for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 37 + 11) % 256;
    for (const std of [3, 1e6]) {
      const opts: SessionOptions = { ...base, width: w, height: h, mean: [0, 0, 0], std: [std, std, std] };
      // As native/src/preprocess.cc computes it: (v - mean) times 1/std, in float32.
      const fed = Array.from({ length: w * h }, (_, i) => Math.fround(pixels[i * 3 + 2]! * Math.fround(1 / std)));
      t.ok(
        fed.some((v) => toHalf(v) !== v),
        `${w}×${h}, v / ${std}: some values are not float16 values`,
      );
      for (const [halfIn, halfOut] of [
        [true, true],
        [true, false],
        [false, true],
        [false, false],
      ] as const) {
        const file = channelModel(dir, halfIn, halfOut, w, h);
        const s = new binding.Session(file, {
          ...opts,
          ...(halfIn ? { inputType: 'float16' as const } : {}),
          ...(halfOut ? { outputType: 'float16' as const } : {}),
        });
        const out = s.infer(pixels, 3);
        t.equal(out, s.outputTensor, 'the mask is still the float32 output tensor');
        // Either end in float16 rounds once (a float16 value survives a second rounding unchanged).
        const expected = halfIn || halfOut ? fed.map(toHalf) : fed;
        const what = `${w}×${h}, v / ${std}, input ${halfIn ? 'float16' : 'float32'}, output ${halfOut ? 'float16' : 'float32'}`;
        t.same(Array.from(out), expected, `${what}: every value`);
        s.releaseTensors();
        t.same(Array.from(s.infer(pixels, 3)), expected, `${what}: the same after the tensors were released`);
        s.close();
      }
    }
  }
});

t.test('a tensor type other than float32 or float16 is a coded TypeError', async (t) => {
  const file = meanModel(t.testdir(), false);
  t.throws(() => new binding.Session(file, { ...base, inputType: 'half' as never }), {
    code: 'ERR_CUTOUT_ARG',
    message: "Expected 'float32' or 'float16' for options.inputType but received 'half'",
  });
  t.throws(() => new binding.Session(file, { ...base, outputType: 16 as never }), {
    code: 'ERR_CUTOUT_ARG',
    message: "Expected 'float32' or 'float16' for options.outputType but received a number",
  });
  // Told float16 for a float32 input: ONNX Runtime refuses the run (a coded error, not garbage).
  const s = new binding.Session(file, { ...base, inputType: 'float16' });
  t.throws(() => s.infer(rgb, 3), { code: 'ERR_CUTOUT_INFERENCE', message: /tensor\(float16\)|float16/ });
  s.close();
});
