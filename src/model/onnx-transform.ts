// Offline graph rewrites on an ONNX ModelProto: widen fp16 to fp32, and drop outputs nothing reads.
import { requireDevPackage } from './dev-package.js';
import { widenHalfBytes } from './fp16.js';

// onnx-proto is generated protobufjs code with loose types; we touch only a few fields.
// biome-ignore lint/suspicious/noExplicitAny: onnx-proto's generated types are loose; we touch only a few fields.
export type Proto = any;

const FLOAT = 1;
const FLOAT16 = 10;

/** onnx-proto's classes; MissingPackageError (dev-package.ts) where it is not installed. */
export function loadOnnx(): Proto {
  return requireDevPackage<{ onnx: Proto }>('onnx-proto').onnx;
}

export function decodeModel(bytes: Uint8Array): Proto {
  return loadOnnx().ModelProto.decode(bytes);
}

export function encodeModel(model: Proto): Uint8Array {
  return loadOnnx().ModelProto.encode(model).finish();
}

function widenTensor(t: Proto): void {
  if (!t || t.dataType !== FLOAT16) return;
  let raw: Uint8Array;
  if (t.rawData && t.rawData.length > 0) {
    raw = t.rawData;
  } else {
    // fp16 values may sit one per int32 slot.
    const halves = new Uint16Array(t.int32Data.length);
    for (let i = 0; i < halves.length; i++) halves[i] = t.int32Data[i] & 0xffff;
    raw = new Uint8Array(halves.buffer);
  }
  t.rawData = widenHalfBytes(raw);
  t.int32Data = [];
  t.dataType = FLOAT;
}

function widenType(vi: Proto): void {
  const tt = vi?.type?.tensorType;
  if (tt && tt.elemType === FLOAT16) tt.elemType = FLOAT;
}

/** Make every fp16 tensor, cast and type fp32. The graph's arithmetic is then plain fp32. */
export function widenFp16(model: Proto): { tensors: number; casts: number } {
  const g = model.graph;
  let tensors = 0;
  let casts = 0;
  for (const t of g.initializer) {
    if (t.dataType === FLOAT16) tensors++;
    widenTensor(t);
  }
  for (const n of g.node) {
    for (const a of n.attribute) {
      if (a.t) {
        if (a.t.dataType === FLOAT16) tensors++;
        widenTensor(a.t);
      }
      if (n.opType === 'Cast' && a.name === 'to' && Number(a.i) === FLOAT16) {
        a.i = FLOAT;
        casts++;
      }
    }
  }
  for (const vi of [...g.input, ...g.output, ...g.valueInfo]) widenType(vi);
  return { tensors, casts };
}

/** Keep only the named graph outputs and the nodes and initializers they depend on. */
export function keepOutputs(model: Proto, keep: string[]): { removedNodes: number } {
  const g = model.graph;
  const missing = keep.filter((k) => !g.output.some((o: Proto) => o.name === k));
  if (missing.length) throw new Error(`Model has no output named ${missing.join(', ')}`);
  g.output = g.output.filter((o: Proto) => keep.includes(o.name));
  const producer = new Map<string, Proto>();
  for (const n of g.node) for (const o of n.output) producer.set(o, n);
  const needed = new Set<Proto>();
  const stack = [...keep];
  const usedNames = new Set<string>(keep);
  while (stack.length) {
    const name = stack.pop()!;
    const n = producer.get(name);
    if (!n || needed.has(n)) continue;
    needed.add(n);
    for (const i of n.input) {
      if (!i) continue;
      usedNames.add(i);
      stack.push(i);
    }
  }
  const before = g.node.length;
  g.node = g.node.filter((n: Proto) => needed.has(n));
  g.initializer = g.initializer.filter((t: Proto) => usedNames.has(t.name));
  const produced = new Set<string>();
  for (const n of g.node) for (const o of n.output) produced.add(o);
  g.valueInfo = g.valueInfo.filter((v: Proto) => produced.has(v.name));
  return { removedNodes: before - g.node.length };
}

/** Make dimension 0 of every graph input and output symbolic ('N'), so one session runs any batch size. */
export function dynamicBatch(model: Proto): { inputs: number; outputs: number } {
  const g = model.graph;
  const setBatch = (vi: Proto): void => {
    const dims = vi?.type?.tensorType?.shape?.dim;
    if (!dims || dims.length === 0) throw new Error(`Graph value ${vi.name} has no shape to make batch-dynamic`);
    dims[0] = { dimParam: 'N' };
  };
  g.input.forEach(setBatch);
  g.output.forEach(setBatch);
  // Recorded intermediate shapes still say batch 1; ONNX Runtime infers them again from the inputs.
  g.valueInfo = [];
  return { inputs: g.input.length, outputs: g.output.length };
}

const UINT8 = 2;

export interface PixelInput {
  /** Name of the new uint8 [N, H, W, 3] input. */
  name: string;
  mean: [number, number, number];
  std: [number, number, number];
}

/**
 * Put the preprocessing into the graph: a new uint8 NHWC RGB input is cast to float, transposed to
 * NCHW and normalised ((v - mean) / std) into what the model's one float input was. The host then
 * sends 3 bytes a pixel instead of 12 and does no per-pixel work (the GPU path, native/src/batch_session.h).
 */
export function pixelInput(model: Proto, spec: PixelInput): { replaced: string } {
  const g = model.graph;
  if (g.input.length !== 1) throw new Error(`Expected one graph input to replace but found ${g.input.length}`);
  const old = g.input[0];
  const dims = old.type?.tensorType?.shape?.dim ?? [];
  if (old.type?.tensorType?.elemType !== FLOAT || dims.length !== 4 || String(dims[1]?.dimValue) !== '3') {
    throw new Error(`Expected a float [N, 3, H, W] input but found ${old.name}`);
  }
  const onnx = loadOnnx();
  const vec = (name: string, values: number[]): Proto =>
    onnx.TensorProto.create({ name, dataType: FLOAT, dims: [1, 3, 1, 1], rawData: new Uint8Array(new Float32Array(values).buffer) });
  const p = spec.name;
  g.initializer.push(
    vec(`${p}/mean`, spec.mean),
    vec(
      `${p}/inv_std`,
      spec.std.map((s) => 1 / s),
    ),
  );
  const attrInt = (name: string, i: number): Proto => onnx.AttributeProto.create({ name, type: 2 /* INT */, i });
  const attrInts = (name: string, ints: number[]): Proto => onnx.AttributeProto.create({ name, type: 7 /* INTS */, ints });
  const nodes = [
    onnx.NodeProto.create({ name: `${p}/Cast`, opType: 'Cast', input: [p], output: [`${p}/f32`], attribute: [attrInt('to', FLOAT)] }),
    onnx.NodeProto.create({
      name: `${p}/Transpose`,
      opType: 'Transpose',
      input: [`${p}/f32`],
      output: [`${p}/nchw`],
      attribute: [attrInts('perm', [0, 3, 1, 2])],
    }),
    onnx.NodeProto.create({ name: `${p}/Sub`, opType: 'Sub', input: [`${p}/nchw`, `${p}/mean`], output: [`${p}/centred`] }),
    onnx.NodeProto.create({ name: `${p}/Mul`, opType: 'Mul', input: [`${p}/centred`, `${p}/inv_std`], output: [old.name] }),
  ];
  g.node = [...nodes, ...g.node];
  const [n, , h, w] = dims;
  g.input = [
    onnx.ValueInfoProto.create({
      name: p,
      type: { tensorType: { elemType: UINT8, shape: { dim: [n, h, w, { dimValue: 3 }] } } },
    }),
  ];
  return { replaced: old.name };
}

const INT64 = 7;

/**
 * Run the model at another input size. ISNet's 34 Resize nodes take their target sizes from Constant
 * [h, w] pairs written for 1024² (each the size of the skip tensor it is concatenated with, down to
 * 32²); they are scaled by the new size over the old, and the graph's input and output dimensions
 * follow. The deepest pooled level is 1/64 of the input, so both sides must be multiples of 64.
 */
export function inputSize(model: Proto, width: number, height: number): { resized: number } {
  if (width % 64 !== 0 || height % 64 !== 0 || width <= 0 || height <= 0) {
    throw new Error(`Expected an input size in multiples of 64 but received ${width}x${height}`);
  }
  const g = model.graph;
  const inDims = g.input[0]?.type?.tensorType?.shape?.dim;
  if (inDims?.length !== 4) throw new Error('Expected a 4-d graph input');
  const oldH = Number(inDims[2].dimValue),
    oldW = Number(inDims[3].dimValue);
  const producer = new Map<string, Proto>();
  for (const n of g.node) for (const o of n.output) producer.set(o, n);
  let resized = 0;
  for (const n of g.node) {
    if (n.opType !== 'Resize' || !n.input[3]) continue;
    const concat = producer.get(n.input[3]);
    const constant = concat?.opType === 'Concat' ? producer.get(concat.input[1]) : undefined;
    const t = constant?.opType === 'Constant' ? constant.attribute[0]?.t : undefined;
    if (!t || t.dataType !== INT64 || !t.rawData || t.rawData.length !== 16) {
      throw new Error(`Resize ${n.name} does not take its size from a constant [h, w] pair`);
    }
    const raw = new Uint8Array(t.rawData);
    const hw = new BigInt64Array(raw.slice().buffer);
    const h = (Number(hw[0]) * height) / oldH,
      w = (Number(hw[1]) * width) / oldW;
    if (!Number.isInteger(h) || !Number.isInteger(w)) throw new Error(`Resize ${n.name}: ${hw[0]}x${hw[1]} does not scale to whole pixels`);
    t.rawData = new Uint8Array(new BigInt64Array([BigInt(h), BigInt(w)]).buffer);
    resized++;
  }
  for (const vi of [...g.input, ...g.output]) {
    const dims = vi?.type?.tensorType?.shape?.dim;
    if (dims?.length === 4) {
      dims[2] = { dimValue: height };
      dims[3] = { dimValue: width };
    }
  }
  g.valueInfo = [];
  return { resized };
}
