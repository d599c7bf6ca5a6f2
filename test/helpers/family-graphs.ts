// The bundled ISNet fp32 graph rewritten, with the project's own ONNX tooling, into other families'
// conventions: the same weights, so each variant's mask must match the bundled model's.
// And small graphs that break a convention, for the load checks. Written to the caller's temp dir.
import fs from 'node:fs';
import path from 'node:path';
import { readSourceModel } from '../../src/model/assemble.js';
import { decodeModel, dynamicBatch, encodeModel, loadOnnx, type Proto } from '../../src/model/onnx-transform.js';
import { MODELS_DIR, readManifest } from '../../src/model/manifest.js';

const FLOAT = 1;
const FLOAT16 = 10;
const INT64 = 7;
/** ImageNet's mean and std, as BiRefNet and U²-Net are fed. */
const IMAGENET_MEAN = [0.485, 0.456, 0.406];
const IMAGENET_STD = [0.229, 0.224, 0.225];

type Dim = number | string;

export const ISNET_FP32 = path.join(MODELS_DIR, 'isnet-fp32.onnx');

function valueInfo(name: string, elemType: number, dims: Dim[]): Proto {
  const onnx = loadOnnx();
  return onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  });
}

function floats(name: string, values: number[], dims: number[]): Proto {
  return loadOnnx().TensorProto.create({ name, dataType: FLOAT, dims, rawData: new Uint8Array(new Float32Array(values).buffer) });
}

function int64s(name: string, values: number[]): Proto {
  return loadOnnx().TensorProto.create({ name, dataType: INT64, dims: [values.length], rawData: new Uint8Array(new BigInt64Array(values.map(BigInt)).buffer) });
}

function node(opType: string, input: string[], output: string[], attribute: Proto[] = []): Proto {
  return loadOnnx().NodeProto.create({ name: `family/${output[0]}`, opType, input, output, attribute });
}

function attrInts(name: string, ints: number[]): Proto {
  return loadOnnx().AttributeProto.create({ name, type: 7 /* INTS */, ints });
}

function attrString(name: string, s: string): Proto {
  return loadOnnx().AttributeProto.create({ name, type: 3 /* STRING */, s: new TextEncoder().encode(s) });
}

/**
 * The bundled model takes (v - 128) / 256 of each byte v. A model fed (v/255 - mean) / std gets an
 * affine x·a + b in front that turns that back into ISNet's own input: a = 255·std/256, b = (255·mean - 128)/256.
 */
function undoNormalisation(mean: number[], std: number[]): { a: number[]; b: number[] } {
  return { a: std.map((s) => (255 * s) / 256), b: mean.map((m) => (255 * m - 128) / 256) };
}

function readIsnet(): Proto {
  return decodeModel(fs.readFileSync(ISNET_FP32));
}

function write(dir: string, name: string, model: Proto): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, encodeModel(model));
  return file;
}

/**
 * BiRefNet's conventions on ISNet's weights: an input `input_image` fed with ImageNet mean/std (an
 * Mul/Add folds ISNet's normalisation back in), and three outputs with the mask last, as logits
 * (Log(p / (1 - p))): first a side output of another shape, then the probability itself (so taking
 * the wrong output, or skipping the sigmoid, gives a visibly wrong mask).
 */
export function writeBirefnetStyle(dir: string, opts: { batch?: 'symbolic' } = {}): string {
  const model = readIsnet();
  const g = model.graph;
  const { a, b } = undoNormalisation(IMAGENET_MEAN, IMAGENET_STD);
  g.initializer.push(floats('family/a', a, [1, 3, 1, 1]), floats('family/b', b, [1, 3, 1, 1]), floats('family/one', [1], []));
  g.node = [
    node('Mul', ['input_image', 'family/a'], ['family/scaled']),
    node('Add', ['family/scaled', 'family/b'], ['input']),
    ...g.node,
    node('Sub', ['family/one', 'output'], ['family/complement']),
    node('Div', ['output', 'family/complement'], ['family/odds']),
    node('Log', ['family/odds'], ['logits']),
  ];
  g.input = [valueInfo('input_image', FLOAT, [1, 3, 1024, 1024])];
  g.output = [
    valueInfo('family/scaled', FLOAT, [1, 3, 1024, 1024]),
    valueInfo('output', FLOAT, [1, 1, 1024, 1024]),
    valueInfo('logits', FLOAT, [1, 1, 1024, 1024]),
  ];
  // A symbolic batch (BiRefNet's own export has one): several photos per run on the batching path.
  if (opts.batch === 'symbolic') {
    dynamicBatch(model);
    return write(dir, 'birefnet-style-batch.onnx', model);
  }
  return write(dir, 'birefnet-style.onnx', model);
}

/**
 * U²-Net's conventions on ISNet's weights: a 320² input (ImageNet mean/std unless `isnetInput`),
 * resized to 1024² inside the graph, and the mask resized back to 320² as output `d0`, first of
 * two; unless `plainOutput`, d0 is squeezed to 0.25 + p/2, which the family's min-max range undoes.
 * With `isnetInput` and `plainOutput` it is the reference the u2net variant is held to.
 */
export function writeU2netStyle(dir: string, opts: { isnetInput?: boolean; plainOutput?: boolean; name?: string } = {}): string {
  const model = readIsnet();
  const g = model.graph;
  const { a, b } = opts.isnetInput ? { a: [1, 1, 1], b: [0, 0, 0] } : undoNormalisation(IMAGENET_MEAN, IMAGENET_STD);
  g.initializer.push(
    floats('family/a', a, [1, 3, 1, 1]),
    floats('family/b', b, [1, 3, 1, 1]),
    int64s('family/up', [1, 3, 1024, 1024]),
    int64s('family/down', [1, 1, 320, 320]),
    floats('family/half', [0.5], []),
    floats('family/quarter', [0.25], []),
  );
  const linear = [attrString('mode', 'linear')];
  const tail = opts.plainOutput
    ? [node('Resize', ['output', '', '', 'family/down'], ['d0'], linear)]
    : [
        node('Resize', ['output', '', '', 'family/down'], ['family/d320'], linear),
        node('Mul', ['family/d320', 'family/half'], ['family/squeezed']),
        node('Add', ['family/squeezed', 'family/quarter'], ['d0']),
      ];
  g.node = [
    node('Mul', ['input.1', 'family/a'], ['family/scaled']),
    node('Add', ['family/scaled', 'family/b'], ['family/x320']),
    node('Resize', ['family/x320', '', '', 'family/up'], ['input'], linear),
    ...g.node,
    ...tail,
  ];
  g.input = [valueInfo('input.1', FLOAT, [1, 3, 320, 320])];
  g.output = [valueInfo('d0', FLOAT, [1, 1, 320, 320]), valueInfo('output', FLOAT, [1, 1, 1024, 1024])];
  return write(dir, opts.name ?? 'u2net-style.onnx', model);
}

/**
 * RMBG-1.4's conventions on ISNet's weights: fed (v/255 - 0.5) / 1.0, the mask the first output
 * squeezed to 0.25 + p/2, which the family's min-max range undoes (to within the bundled mask's own
 * least and greatest values, 0 and 1 on a real photo).
 */
export function writeRmbgStyle(dir: string): string {
  const model = readIsnet();
  const g = model.graph;
  const { a, b } = undoNormalisation([0.5, 0.5, 0.5], [1, 1, 1]);
  g.initializer.push(
    floats('family/a', a, [1, 3, 1, 1]),
    floats('family/b', b, [1, 3, 1, 1]),
    floats('family/half', [0.5], []),
    floats('family/quarter', [0.25], []),
  );
  g.node = [
    node('Mul', ['pixel_values', 'family/a'], ['family/scaled']),
    node('Add', ['family/scaled', 'family/b'], ['input']),
    ...g.node,
    node('Mul', ['output', 'family/half'], ['family/squeezed']),
    node('Add', ['family/squeezed', 'family/quarter'], ['alphas']),
  ];
  g.input = [valueInfo('pixel_values', FLOAT, [1, 3, 1024, 1024])];
  g.output = [valueInfo('alphas', FLOAT, [1, 1, 1024, 1024])];
  return write(dir, 'rmbg-style.onnx', model);
}

/**
 * A channels-last export (as from TensorFlow) on ISNet's weights: input `image` [1, 1024, 1024, 3],
 * fed with mean 0.5 std 1.0 (folded back into ISNet's own input), transposed to NCHW inside the
 * graph; the mask as the bundled model gives it. Read through a descriptor with `layout: 'nhwc'`.
 */
export function writeNhwcStyle(dir: string): string {
  const model = readIsnet();
  const g = model.graph;
  const { a, b } = undoNormalisation([0.5, 0.5, 0.5], [1, 1, 1]);
  g.initializer.push(floats('family/a', a, [1, 3, 1, 1]), floats('family/b', b, [1, 3, 1, 1]));
  g.node = [
    node('Transpose', ['image'], ['family/nchw'], [attrInts('perm', [0, 3, 1, 2])]),
    node('Mul', ['family/nchw', 'family/a'], ['family/scaled']),
    node('Add', ['family/scaled', 'family/b'], ['input']),
    ...g.node,
  ];
  g.input = [valueInfo('image', FLOAT, [1, 1024, 1024, 3])];
  return write(dir, 'nhwc-style.onnx', model);
}

/**
 * ISNet with fp16 weights as its npm package ships it (`isnet-fp16`: float32 input and outputs, a Cast
 * to float16 after the input and one back to float32 before each output, as onnxconverter-common's
 * `keep_io_types` writes them), copied from the package's chunks without assembling models/.
 */
export function writeFp16AsShipped(dir: string): string {
  const file = path.join(dir, 'isnet-fp16.onnx');
  fs.writeFileSync(file, readSourceModel(readManifest().models['isnet-fp16']!));
  return file;
}

/**
 * The same weights as an fp16 export without those casts: the input and every output float16 (what
 * `convert_float_to_float16` writes without `keep_io_types`). Same arithmetic inside, so the same mask
 * as the file above once the session converts at both ends.
 */
export function writeFp16IoStyle(dir: string, opts: { batch?: 'symbolic' } = {}): string {
  const model = decodeModel(readSourceModel(readManifest().models['isnet-fp16']!));
  const g = model.graph;
  const input = g.input[0].name as string;
  const outputs = new Set<string>(g.output.map((o: Proto) => o.name as string));
  const renamed = new Map<string, string>(); // a cast's output → what it cast
  g.node = g.node.filter((n: Proto) => {
    const cast = n.opType === 'Cast' && (n.input[0] === input || outputs.has(n.output[0]));
    if (cast) renamed.set(n.output[0], n.input[0]);
    return !cast;
  });
  if (renamed.size !== outputs.size + 1) throw new Error(`expected a Cast after the input and before each of ${outputs.size} outputs, found ${renamed.size}`);
  for (const n of g.node) n.input = n.input.map((name: string) => (renamed.has(name) && renamed.get(name) === input ? input : name));
  // Each output is now produced under its own name: the producer of the cast's source writes it.
  for (const [castOut, source] of renamed) {
    if (source === input) continue;
    for (const n of g.node) {
      n.output = n.output.map((name: string) => (name === source ? castOut : name));
      n.input = n.input.map((name: string) => (name === source ? castOut : name));
    }
  }
  for (const v of [...g.input, ...g.output]) v.type.tensorType.elemType = FLOAT16;
  // With N as its batch: the file bench/gpu-check.ts --model-file runs batched on a GPU (docs/gpu.md).
  if (opts.batch === 'symbolic') {
    dynamicBatch(model);
    return write(dir, 'isnet-fp16-io-batch.onnx', model);
  }
  return write(dir, 'isnet-fp16-io.onnx', model);
}

export interface BrokenGraph {
  inputs?: { name: string; elemType: number; dims: Dim[] }[];
  outputs?: { name: string; elemType: number; dims: Dim[] }[];
}

/**
 * A graph with the given inputs and outputs and no nodes: enough for the load checks, which read the
 * signature and refuse before any session loads it. Defaults: ISNet's [1, 3, 1024, 1024] → [1, 1, 1024, 1024].
 */
export function writeSignatureGraph(dir: string, name: string, spec: BrokenGraph = {}): string {
  const onnx = loadOnnx();
  const inputs = spec.inputs ?? [{ name: 'input', elemType: FLOAT, dims: [1, 3, 1024, 1024] }];
  const outputs = spec.outputs ?? [{ name: 'output', elemType: FLOAT, dims: [1, 1, 1024, 1024] }];
  const graph = onnx.GraphProto.create({
    name,
    input: inputs.map((i) => valueInfo(i.name, i.elemType, i.dims)),
    output: outputs.map((o) => valueInfo(o.name, o.elemType, o.dims)),
    // A weight listed among the inputs too, as files of IR version 3 do: not an image input.
    initializer: [floats('w', [1], [1])],
  });
  graph.input.push(valueInfo('w', FLOAT, [1]));
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'cutout-tests', graph });
  const file = path.join(dir, name);
  fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
  return file;
}
