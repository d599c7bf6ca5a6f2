// The model families a file of the user's own may belong to, and their conventions: the input's size,
// normalisation and layout, which output is the mask and how it becomes one. The one place these are
// written down (docs/models.md, "A model of your own"). A file is checked against its family at start
// (checkModelFile), from the graph's own signature (onnx-signature.ts), and refused with a message
// naming what differs; the addon then normalises the input with the family's mean and std
// (native/src/preprocess.h) and applies its activation and range to the output (native/src/postprocess.h).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SessionOptions, TensorType } from './manifest.js';
import {
  elemTypeName,
  formatDims,
  ONNX_FLOAT,
  ONNX_FLOAT16,
  OnnxFormatError,
  readOnnxSignatureFile,
  type OnnxDim,
  type OnnxGraphFacts,
  type OnnxProducer,
  type OnnxSignature,
  type OnnxValue,
} from './onnx-signature.js';

import { MODEL_FAMILIES, type ModelFamily, parseModelFamily } from '../domain/model-family.js';

type Rgb = [number, number, number];

export type ModelLayout = 'nchw' | 'nhwc';

/** How a family's (or a descriptor's) model is fed and read. Mean and std are on RGB scaled to [0, 1]. */
export interface ModelConvention {
  input: {
    /** The input's name; undefined: the file's one input, whatever its name. */
    name?: string;
    width: number;
    height: number;
    mean: Rgb;
    std: Rgb;
    /** Float32 [N, 3, H, W] ('nchw', every public family's) or channels last, [N, H, W, 3] ('nhwc', e.g. a TensorFlow export). */
    layout: ModelLayout;
  };
  output: {
    /** The mask is the output of this name, or the one at this index (negative: from the end, -1 the last). */
    name?: string;
    index?: number;
    /** 'sigmoid': the output is logits; 'none': already a probability. */
    activation: 'sigmoid' | 'none';
    /** 'minmax': stretched to [0, 1] over each image; 'unit': used as it is. */
    range: 'minmax' | 'unit';
  };
}

const IMAGENET_MEAN: Rgb = [0.485, 0.456, 0.406];
const IMAGENET_STD: Rgb = [0.229, 0.224, 0.225];
const HALF: Rgb = [0.5, 0.5, 0.5];
const ONE: Rgb = [1, 1, 1];

/**
 * The public families, as their authors' inference code feeds and reads them:
 * - isnet: DIS (xuebinqin/DIS) `Normalize([0.5]*3, [1.0]*3)` at 1024², the first output (d1, a sigmoid already);
 * - u2net: U²-Net at 320², ImageNet mean/std, d0 (the first output, a sigmoid already), min-max
 *   normalised as its test script and rembg do;
 * - birefnet: BiRefNet at 1024², ImageNet mean/std, the last output (the finest scale), logits;
 * - rmbg: BRIA RMBG-1.4 (an ISNet) at 1024², mean 0.5 std 1.0, the first output, min-max normalised as
 *   its `postprocess_image` does. RMBG-2.0 is a BiRefNet: the `birefnet` family.
 */
export const FAMILY_CONVENTIONS: Readonly<Record<Exclude<ModelFamily, 'custom'>, ModelConvention>> = Object.freeze({
  isnet: { input: { width: 1024, height: 1024, mean: HALF, std: ONE, layout: 'nchw' }, output: { index: 0, activation: 'none', range: 'unit' } },
  u2net: {
    input: { width: 320, height: 320, mean: IMAGENET_MEAN, std: IMAGENET_STD, layout: 'nchw' },
    output: { index: 0, activation: 'none', range: 'minmax' },
  },
  birefnet: {
    input: { width: 1024, height: 1024, mean: IMAGENET_MEAN, std: IMAGENET_STD, layout: 'nchw' },
    output: { index: -1, activation: 'sigmoid', range: 'unit' },
  },
  rmbg: { input: { width: 1024, height: 1024, mean: HALF, std: ONE, layout: 'nchw' }, output: { index: 0, activation: 'none', range: 'minmax' } },
});

/** A model file that cannot be used: the message names the file and what differs. */
export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFileError';
  }
}

/** What the user gave: the file, and its family and/or descriptor. */
export interface ModelFileRequest {
  file: string;
  family?: ModelFamily | undefined;
  /** A descriptor's path; default: `<file>.json` when it exists. */
  descriptor?: string | undefined;
}

/** A checked model file, ready for the pool. */
export interface ModelFile {
  path: string;
  family: ModelFamily;
  sha256: string;
  /** The descriptor read, if any. */
  descriptor?: string;
  convention: ModelConvention;
  /** The graph's input and mask output, as the session runs them. */
  inputName: string;
  outputName: string;
  /** 4: [N, 1, H, W]; 3: [N, H, W]. */
  outputRank: 3 | 4;
  /** float16 where the file's input or output is (an fp16 export without float32 casts at its ends). */
  inputType: TensorType;
  outputType: TensorType;
  /** Bytes of fp16 weights in the file (0 for an fp32 or int8 file): held as float32 once loaded on the CPU. */
  float16WeightBytes: number;
  /**
   * 'symbolic' when the input's and the mask's batch dimensions are both recorded as symbolic: the
   * file can run several photos at once on the staged, batching path; 'fixed' otherwise.
   */
  batch: 'symbolic' | 'fixed';
  /** Signs that the file is of another family than the one given (familyWarnings): printed at start, not refused. */
  warnings: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRgb = (v: unknown, positive: boolean): v is Rgb =>
  Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number' && Number.isFinite(x) && (!positive || x > 0));

function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * A descriptor's JSON over a base convention (a named family's, or none for `custom`): every field it
 * gives replaces the family's; `custom` must give them all. Throws ModelFileError naming the field.
 */
export function conventionFromDescriptor(json: unknown, base: ModelConvention | undefined, where: string): ModelConvention {
  const bad = (field: string, expected: string, value: unknown): ModelFileError =>
    new ModelFileError(`Expected ${expected} for ${field} in ${where} but received ${value === undefined ? 'nothing' : shown(value)}`);
  if (!isRecord(json)) throw bad('the descriptor', 'a JSON object', json);
  const input = json.input ?? {};
  const output = json.output ?? {};
  if (!isRecord(input)) throw bad('input', 'an object', input);
  if (!isRecord(output)) throw bad('output', 'an object', output);
  const pick = <T>(obj: Record<string, unknown>, key: string, field: string, expected: string, ok: (v: unknown) => boolean, fallback: T | undefined): T => {
    const v = obj[key];
    if (v === undefined && fallback !== undefined) return fallback;
    if (!ok(v)) throw bad(field, expected, v);
    return v as T;
  };
  const side = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 16 && (v as number) <= 8192;
  const name = input.name;
  if (name !== undefined && (typeof name !== 'string' || name === '')) throw bad('input.name', 'a string', name);
  const layout = pick<ModelLayout>(
    input,
    'layout',
    'input.layout',
    "'nchw' (float32 [N, 3, H, W]) or 'nhwc' ([N, H, W, 3])",
    (v) => v === 'nchw' || v === 'nhwc',
    base?.input.layout,
  );
  const out: ModelConvention = {
    input: {
      ...(typeof name === 'string' ? { name } : base?.input.name !== undefined ? { name: base.input.name } : {}),
      width: pick(input, 'width', 'input.width', 'an integer from 16 to 8192', side, base?.input.width),
      height: pick(input, 'height', 'input.height', 'an integer from 16 to 8192', side, base?.input.height),
      mean: pick(input, 'mean', 'input.mean', '3 numbers (RGB on a 0..1 scale)', (v) => isRgb(v, false), base?.input.mean),
      std: pick(input, 'std', 'input.std', '3 positive numbers (RGB on a 0..1 scale)', (v) => isRgb(v, true), base?.input.std),
      layout,
    },
    output: {
      activation: pick(output, 'activation', 'output.activation', "'sigmoid' or 'none'", (v) => v === 'sigmoid' || v === 'none', base?.output.activation),
      range: pick(output, 'range', 'output.range', "'minmax' or 'unit'", (v) => v === 'minmax' || v === 'unit', base?.output.range),
    },
  };
  if (output.name !== undefined && output.index !== undefined) throw bad('output', 'either name or index, not both', output);
  if (output.name !== undefined) {
    if (typeof output.name !== 'string' || output.name === '') throw bad('output.name', 'a string', output.name);
    out.output.name = output.name;
  } else if (output.index !== undefined) {
    if (!Number.isInteger(output.index)) throw bad('output.index', 'an integer (negative counts from the end)', output.index);
    out.output.index = output.index as number;
  } else if (base) {
    if (base.output.name !== undefined) out.output.name = base.output.name;
    if (base.output.index !== undefined) out.output.index = base.output.index;
  } else {
    throw bad('output', 'a name or an index', undefined);
  }
  return out;
}

/** The descriptor to read: the one named, else `<file>.json` when there is one. */
function descriptorPath(req: ModelFileRequest): string | undefined {
  if (req.descriptor) return req.descriptor;
  const beside = `${req.file}.json`;
  return fs.existsSync(beside) ? beside : undefined;
}

/** The family and convention a request names (no file bytes read). Throws ModelFileError. */
export function resolveConvention(req: ModelFileRequest): { family: ModelFamily; convention: ModelConvention; descriptor?: string } {
  if (req.family !== undefined && !parseModelFamily(req.family)) {
    throw new ModelFileError(`Expected one of ${MODEL_FAMILIES.join(', ')} for the model family but received ${shown(req.family)}`);
  }
  const descriptor = descriptorPath(req);
  let json: unknown;
  if (descriptor) {
    let text: string;
    try {
      text = fs.readFileSync(descriptor, 'utf8');
    } catch (err) {
      throw new ModelFileError(`Could not read the model descriptor ${descriptor}: ${(err as Error).message}`);
    }
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new ModelFileError(`The model descriptor ${descriptor} is not JSON: ${(err as Error).message}`);
    }
  }
  const named = isRecord(json) ? json.family : undefined;
  if (named !== undefined && (typeof named !== 'string' || !parseModelFamily(named))) {
    throw new ModelFileError(`Expected one of ${MODEL_FAMILIES.join(', ')} for family in ${descriptor} but received ${shown(named)}`);
  }
  if (req.family && named !== undefined && named !== req.family) {
    throw new ModelFileError(`--model-family is ${req.family} but the descriptor ${descriptor} says ${named as string}`);
  }
  const family = req.family ?? (named as ModelFamily | undefined);
  if (!family) {
    throw new ModelFileError(
      `The model file ${req.file} needs a family: --model-family ${MODEL_FAMILIES.join('|')} (CUTOUT_MODEL_FAMILY), or a descriptor ${req.file}.json with "family"`,
    );
  }
  if (family === 'custom' && json === undefined) {
    throw new ModelFileError(`Family custom needs a descriptor: ${req.file}.json or --model-descriptor (docs/models.md, "A model of your own")`);
  }
  const base = family === 'custom' ? undefined : FAMILY_CONVENTIONS[family];
  const convention = json === undefined ? base! : conventionFromDescriptor(json, base, descriptor!);
  return { family, convention, ...(descriptor ? { descriptor } : {}) };
}

const isFixed = (d: OnnxDim | undefined): d is number => typeof d === 'number' && d > 0;

/**
 * Check a graph's signature against a convention. Returns the input and output names and the
 * output's rank, or throws ModelFileError listing every difference found.
 */
export function checkSignature(
  sig: OnnxSignature,
  c: ModelConvention,
  what: string,
): { inputName: string; outputName: string; outputRank: 3 | 4; inputType: TensorType; outputType: TensorType; batch: 'symbolic' | 'fixed' } {
  const problems: string[] = [];
  const { width, height } = c.input;
  const nhwc = c.input.layout === 'nhwc';
  const shape = nhwc ? `[N, ${height}, ${width}, 3] (NHWC)` : `[N, 3, ${height}, ${width}] (NCHW)`;
  // Input: one float32 or float16 [N, 3, H, W] (or [N, H, W, 3]) with N 1 or symbolic, H and W the convention's
  // size or symbolic.
  let input: OnnxValue | undefined;
  if (sig.inputs.length !== 1) {
    problems.push(`it has ${sig.inputs.length} inputs (${sig.inputs.map((i) => `'${i.name}'`).join(', ') || 'none'}), expected one image input`);
  } else {
    input = sig.inputs[0]!;
    if (c.input.name !== undefined && input.name !== c.input.name) problems.push(`its input is named '${input.name}', expected '${c.input.name}'`);
    if (!floatType(input.elemType)) problems.push(`input '${input.name}' is ${elemTypeName(input.elemType)}, expected float (float32) or float16`);
    const d = input.dims;
    if (d && d.length !== 4) {
      problems.push(`input '${input.name}' has rank ${d.length} ${formatDims(d)}, expected rank 4 ${shape}`);
    } else if (d) {
      const [n, ch, h, w] = nhwc ? [d[0], d[3], d[1], d[2]] : d;
      if (isFixed(n) && n !== 1) problems.push(`input '${input.name}' has a fixed batch of ${n}, expected 1 or a symbolic batch`);
      if (isFixed(ch) && ch !== 3) {
        problems.push(`input '${input.name}' has ${ch} channels in dimension ${nhwc ? 3 : 1} ${formatDims(d)}, expected 3 (${nhwc ? 'NHWC' : 'NCHW'} RGB)`);
      }
      if ((isFixed(h) && h !== height) || (isFixed(w) && w !== width)) {
        problems.push(`input '${input.name}' is ${formatDims(d)}, expected ${height}x${width} (height x width) for this family`);
      }
    }
  }
  // Output: the convention's pick; float32 or float16 [N, 1, H, W] or [N, H, W] at the input's size.
  let output: OnnxValue | undefined;
  const names = sig.outputs.map((o) => `'${o.name}'`).join(', ');
  if (c.output.name !== undefined) {
    output = sig.outputs.find((o) => o.name === c.output.name);
    if (!output) problems.push(`it has no output named '${c.output.name}' (outputs: ${names})`);
  } else {
    const index = c.output.index ?? 0;
    const at = index < 0 ? sig.outputs.length + index : index;
    output = sig.outputs[at];
    if (!output) problems.push(`it has ${sig.outputs.length} outputs (${names}), so no output at index ${index}`);
  }
  let outputRank: 3 | 4 = 4;
  if (output) {
    if (!floatType(output.elemType) && output.elemType !== 0)
      problems.push(`output '${output.name}' is ${elemTypeName(output.elemType)}, expected float (float32) or float16`);
    const d = output.dims;
    const expected = `[N, 1, ${height}, ${width}] or [N, ${height}, ${width}]`;
    if (d && d.length === 3) outputRank = 3;
    if (d && d.length !== 3 && d.length !== 4) {
      problems.push(`output '${output.name}' has rank ${d.length} ${formatDims(d)}, expected ${expected}`);
    } else if (d) {
      const [n, ...rest] = d;
      const ch = d.length === 4 ? rest.shift() : 1;
      const [h, w] = rest;
      if ((isFixed(n) && n !== 1) || (isFixed(ch) && ch !== 1) || (isFixed(h) && h !== height) || (isFixed(w) && w !== width)) {
        problems.push(`output '${output.name}' is ${formatDims(d)}, expected ${expected} (one mask at the input's size)`);
      }
    }
  }
  if (problems.length) throw new ModelFileError(`${what} does not fit: ${problems.join('; ')}`);
  // Batched only when both ends say so: a mask of unrecorded shape might hold one photo only.
  const symbolic = (d: OnnxDim[] | undefined) => d !== undefined && d.length > 0 && !isFixed(d[0]);
  const batch = symbolic(input!.dims) && symbolic(output!.dims) ? 'symbolic' : 'fixed';
  return {
    inputName: input!.name,
    outputName: output!.name,
    outputRank,
    inputType: floatType(input!.elemType)!,
    outputType: floatType(output!.elemType) ?? 'float32',
    batch,
  };
}

/** The tensor type the session feeds or reads for an ONNX element type; undefined for any other type. */
function floatType(elemType: number): TensorType | undefined {
  if (elemType === ONNX_FLOAT) return 'float32';
  if (elemType === ONNX_FLOAT16) return 'float16';
  return undefined;
}

/** sha256 of a file read 4 MiB at a time (a BiRefNet fp32 file is near 1 GB: never held whole). */
function hashFile(file: string): string {
  const hash = crypto.createHash('sha256');
  const chunk = Buffer.allocUnsafe(4 * 1024 * 1024);
  const fd = fs.openSync(file, 'r');
  try {
    for (let n = fs.readSync(fd, chunk); n > 0; n = fs.readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * Read, hash and check a model file against its family (and descriptor). Throws ModelFileError with
 * a message that names the file and each difference.
 */
export function checkModelFile(req: ModelFileRequest): ModelFile {
  const { family, convention, descriptor } = resolveConvention(req);
  let sig: OnnxGraphFacts;
  try {
    sig = readOnnxSignatureFile(req.file, { nodes: true });
  } catch (err) {
    // "… is not an ONNX file (…)", "… is incomplete (N of M bytes, …)": OnnxFormatError's words.
    if (err instanceof OnnxFormatError) throw new ModelFileError(`The model file ${req.file} is ${err.message}`);
    throw new ModelFileError(`Could not read the model file ${req.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const what = `The model file ${req.file} (family ${family}${descriptor ? `, descriptor ${path.basename(descriptor)}` : ''})`;
  const names = checkSignature(sig, convention, what);
  const warnings = familyWarnings(sig.producers, names.outputName, convention, family);
  const sha256 = hashFile(req.file);
  return {
    path: path.resolve(req.file),
    family,
    sha256,
    convention,
    ...names,
    float16WeightBytes: sig.float16WeightBytes,
    warnings,
    ...(descriptor ? { descriptor } : {}),
  };
}

/**
 * Operators that pass a value's range through unchanged (type, layout, quantisation, resizing):
 * looked through to find what computed a mask. A quantised ISNet's mask is Sigmoid → Cast.
 */
const RANGE_KEEPING_OPS = new Set([
  'Cast',
  'Identity',
  'Reshape',
  'Squeeze',
  'Unsqueeze',
  'Flatten',
  'Transpose',
  'Slice',
  'Resize',
  'Upsample',
  'QuantizeLinear',
  'DequantizeLinear',
]);
/** Operators whose result lies in [0, 1] (or a bounded range): a probability already. */
const BOUNDED_OPS = new Set(['Sigmoid', 'HardSigmoid', 'Softmax', 'Clip']);

/** The operator that last changed a value's range: the node computing it, looking through RANGE_KEEPING_OPS. */
export function rangeOp(producers: ReadonlyMap<string, OnnxProducer>, value: string): string | undefined {
  let name = value;
  for (let step = 0; step < 16; step++) {
    const node = producers.get(name);
    if (!node) return undefined;
    if (!RANGE_KEEPING_OPS.has(node.op) || node.inputs[0] === undefined) return node.op;
    name = node.inputs[0];
  }
  return undefined;
}

/**
 * Signs, from the graph itself, that the file is not of the family given. The reliable one: what
 * computes the mask. ISNet, U²-Net and RMBG-1.4 end in a Sigmoid (a probability); BiRefNet and RMBG-2.0
 * give logits (a convolution's output). A probability read as logits gets a second sigmoid (the mask
 * never falls below 0.5: nothing is removed); logits read as a probability are cut to 0 and 1.
 * Names and output counts vary between exports, so they are not used. Nothing is said where the
 * mask's producer is not found (an output that is a graph input, or a chain of unknown operators).
 */
export function familyWarnings(producers: ReadonlyMap<string, OnnxProducer>, outputName: string, c: ModelConvention, family: ModelFamily): string[] {
  const op = rangeOp(producers, outputName);
  if (op === undefined) return [];
  const bounded = BOUNDED_OPS.has(op);
  if (c.output.activation === 'sigmoid' && bounded) {
    return [
      `the mask output '${outputName}' comes out of a ${op}: it is a probability already, but family ${family} reads it as logits and applies a sigmoid again ` +
        '(the mask would never fall below 0.5). An ISNet, U²-Net or RMBG-1.4 file? Give --model-family isnet, u2net or rmbg',
    ];
  }
  // A min-max stretch (u2net, rmbg) makes any monotonic output a usable mask: only a mask read as it is can be cut.
  if (c.output.activation === 'none' && c.output.range === 'unit' && !bounded) {
    return [
      `the mask output '${outputName}' comes out of a ${op}, not a Sigmoid: family ${family} reads it as a probability already, and logits would be cut to 0 and 1. ` +
        'A BiRefNet or RMBG-2.0 file? Give --model-family birefnet',
    ];
  }
  return [];
}

/** The addon's Session options for a checked file: mean and std in the 0..255 units the addon works in. */
export function sessionOptionsForFile(m: ModelFile, threads: number): SessionOptions {
  const { width, height, mean, std } = m.convention.input;
  const u8 = (v: Rgb): Rgb => [v[0] * 255, v[1] * 255, v[2] * 255];
  return {
    threads,
    inputName: m.inputName,
    outputName: m.outputName,
    width,
    height,
    mean: u8(mean),
    std: u8(std),
    activation: m.convention.output.activation,
    range: m.convention.output.range,
    outputRank: m.outputRank,
    ...(m.convention.input.layout === 'nhwc' ? { layout: 'nhwc' as const } : {}),
    ...(m.inputType === 'float16' ? { inputType: 'float16' as const } : {}),
    ...(m.outputType === 'float16' ? { outputType: 'float16' as const } : {}),
  };
}
