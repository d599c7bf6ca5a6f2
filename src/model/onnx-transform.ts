// Offline graph rewrites on an ONNX ModelProto: widen fp16 to fp32, and drop outputs nothing reads.
import { createRequire } from 'node:module';
import { widenHalfBytes } from './fp16.js';

const require = createRequire(import.meta.url);

// onnx-proto is generated protobufjs code with loose types; we touch only a few fields.
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Proto = any;

const FLOAT = 1;
const FLOAT16 = 10;

export function loadOnnx(): Proto {
  try {
    return require('onnx-proto').onnx;
  } catch (err) {
    throw new Error(`Model assembly needs the 'onnx-proto' package (a dev dependency): ${(err as Error).message}`);
  }
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
