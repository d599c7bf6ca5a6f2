// The inputs and outputs of an ONNX file (names, element types, shapes), read straight from its
// protobuf bytes: only ModelProto.graph's input, output and initializer names (and the
// initializers' types and sizes) are decoded, every weight is skipped by its length. Runs at start
// on the main thread (no addon, no onnx-proto, which is a dev dependency). From a file only the tags
// and names are read, a 64 KiB window at a time.
import fs from 'node:fs';

/** ONNX TensorProto.DataType numbers → the names ONNX Runtime prints (`tensor(float)`). */
export const ONNX_ELEM_TYPES: Readonly<Record<number, string>> = {
  1: 'float',
  2: 'uint8',
  3: 'int8',
  4: 'uint16',
  5: 'int16',
  6: 'int32',
  7: 'int64',
  8: 'string',
  9: 'bool',
  10: 'float16',
  11: 'double',
  12: 'uint32',
  13: 'uint64',
  16: 'bfloat16',
};

export const ONNX_FLOAT = 1;
export const ONNX_FLOAT16 = 10;

/** One dimension: a fixed size, or the name of a symbolic one ('' when it has neither). */
export type OnnxDim = number | string;

export interface OnnxValue {
  name: string;
  /** TensorProto.DataType; 0 when the file does not say (or the value is not a tensor). */
  elemType: number;
  /** undefined when the file records no shape. */
  dims: OnnxDim[] | undefined;
}

export interface OnnxSignature {
  /** The graph's inputs that are not initializers (older files list the weights as inputs too). */
  inputs: OnnxValue[];
  outputs: OnnxValue[];
  /** Bytes of float16 weights (initializers): ONNX Runtime's CPU provider holds them widened to float32. */
  float16WeightBytes: number;
}

export class OnnxFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OnnxFormatError';
  }
}

/** The element type as ONNX Runtime names it (`float16`), or `type N`. */
export function elemTypeName(t: number): string {
  return ONNX_ELEM_TYPES[t] ?? (t === 0 ? 'unknown type' : `type ${t}`);
}

/** `[1, 3, 1024, 1024]`, symbolic dimensions by name, unknown ones as `?`. */
export function formatDims(dims: OnnxDim[] | undefined): string {
  if (!dims) return 'an unrecorded shape';
  return `[${dims.map((d) => (d === '' ? '?' : String(d))).join(', ')}]`;
}

/** Bytes read by position: a buffer in memory, or a file read a window at a time. */
interface ByteSource {
  readonly length: number;
  byteAt(pos: number): number;
  /** [start, end): short ranges only (names). */
  slice(start: number, end: number): Uint8Array;
}

function memorySource(buf: Uint8Array): ByteSource {
  return { length: buf.length, byteAt: (pos) => buf[pos]!, slice: (start, end) => buf.subarray(start, end) };
}

/**
 * A file read through a 64 KiB window: the tags and names are read, every weight is skipped by its
 * length without being read, so a model of any size costs a few windows of memory.
 */
function fileSource(fd: number, length: number): ByteSource {
  const WINDOW = 64 * 1024;
  const window = Buffer.allocUnsafe(WINDOW);
  let at = -1;
  let filled = 0;
  const load = (pos: number) => {
    filled = fs.readSync(fd, window, 0, Math.min(WINDOW, length - pos), pos);
    at = pos;
  };
  return {
    length,
    byteAt(pos) {
      if (pos < at || pos >= at + filled) load(pos);
      return window[pos - at]!;
    },
    slice(start, end) {
      const out = Buffer.allocUnsafe(end - start);
      if (end > start) fs.readSync(fd, out, 0, end - start, start);
      return out;
    },
  };
}

class Reader {
  pos: number;
  constructor(
    readonly src: ByteSource,
    start = 0,
    readonly end = src.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new OnnxFormatError('truncated varint');
      const b = this.src.byteAt(this.pos++);
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 128;
    }
    throw new OnnxFormatError('varint longer than 10 bytes');
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wire: number } {
    const t = this.varint();
    return { field: Math.floor(t / 8), wire: t & 7 };
  }

  /** A length-delimited field's bounds; the reader moves past it. */
  bytes(): { start: number; end: number } {
    const len = this.varint();
    const start = this.pos;
    if (start + len > this.end) throw new OnnxFormatError('a field runs past the end of its message');
    this.pos = start + len;
    return { start, end: start + len };
  }

  string(): string {
    const { start, end } = this.bytes();
    if (end - start > 1 << 20) throw new OnnxFormatError('a name longer than 1 MiB');
    return Buffer.from(this.src.slice(start, end)).toString('utf8');
  }

  sub(): Reader {
    const { start, end } = this.bytes();
    return new Reader(this.src, start, end);
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new OnnxFormatError(`unsupported wire type ${wire}`);
    if (this.pos > this.end) throw new OnnxFormatError('a field runs past the end of its message');
  }
}

// Field numbers from onnx.proto3.
const MODEL_GRAPH = 7;
const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const TENSOR_NAME = 8;
const TENSOR_DIMS = 1;
const TENSOR_DATA_TYPE = 2;
const TENSOR_RAW_DATA = 9;
const VALUE_INFO_NAME = 1;
const VALUE_INFO_TYPE = 2;
const TYPE_TENSOR = 1;
const TENSOR_TYPE_ELEM = 1;
const TENSOR_TYPE_SHAPE = 2;
const SHAPE_DIM = 1;
const DIM_VALUE = 1;
const DIM_PARAM = 2;

function readDim(r: Reader): OnnxDim {
  let dim: OnnxDim = '';
  while (!r.done) {
    const { field, wire } = r.tag();
    if (field === DIM_VALUE && wire === 0) dim = r.varint();
    else if (field === DIM_PARAM && wire === 2) dim = r.string();
    else r.skip(wire);
  }
  return dim;
}

function readValueInfo(r: Reader): OnnxValue {
  const value: OnnxValue = { name: '', elemType: 0, dims: undefined };
  while (!r.done) {
    const { field, wire } = r.tag();
    if (field === VALUE_INFO_NAME && wire === 2) value.name = r.string();
    else if (field === VALUE_INFO_TYPE && wire === 2) {
      const type = r.sub();
      while (!type.done) {
        const t = type.tag();
        if (t.field !== TYPE_TENSOR || t.wire !== 2) {
          type.skip(t.wire);
          continue;
        }
        const tensor = type.sub();
        while (!tensor.done) {
          const f = tensor.tag();
          if (f.field === TENSOR_TYPE_ELEM && f.wire === 0) value.elemType = tensor.varint();
          else if (f.field === TENSOR_TYPE_SHAPE && f.wire === 2) {
            const shape = tensor.sub();
            value.dims = [];
            while (!shape.done) {
              const s = shape.tag();
              if (s.field === SHAPE_DIM && s.wire === 2) value.dims.push(readDim(shape.sub()));
              else shape.skip(s.wire);
            }
          } else tensor.skip(f.wire);
        }
      }
    } else r.skip(wire);
  }
  return value;
}

/** The graph's signature; throws OnnxFormatError when the bytes are not an ONNX model with a graph. */
export function readOnnxSignature(bytes: Uint8Array): OnnxSignature {
  return signatureOf(new Reader(memorySource(bytes)));
}

/** The same, read from a file a window at a time (the weights are never read). */
export function readOnnxSignatureFile(file: string): OnnxSignature {
  const fd = fs.openSync(file, 'r');
  try {
    return signatureOf(new Reader(fileSource(fd, fs.fstatSync(fd).size)));
  } finally {
    fs.closeSync(fd);
  }
}

function signatureOf(model: Reader): OnnxSignature {
  let graph: Reader | undefined;
  while (!model.done) {
    const { field, wire } = model.tag();
    if (field === MODEL_GRAPH && wire === 2) graph = model.sub();
    else model.skip(wire);
  }
  if (!graph) throw new OnnxFormatError('no graph in the file');
  const inputs: OnnxValue[] = [];
  const outputs: OnnxValue[] = [];
  const initializers = new Set<string>();
  let float16WeightBytes = 0;
  while (!graph.done) {
    const { field, wire } = graph.tag();
    if (field === GRAPH_INPUT && wire === 2) inputs.push(readValueInfo(graph.sub()));
    else if (field === GRAPH_OUTPUT && wire === 2) outputs.push(readValueInfo(graph.sub()));
    else if (field === GRAPH_INITIALIZER && wire === 2) {
      // The name, type and size: the tensor's data is skipped by its length.
      const t = graph.sub();
      let type = 0;
      let elements = 1;
      let raw = -1;
      while (!t.done) {
        const f = t.tag();
        if (f.field === TENSOR_NAME && f.wire === 2) initializers.add(t.string());
        else if (f.field === TENSOR_DATA_TYPE && f.wire === 0) type = t.varint();
        else if (f.field === TENSOR_DIMS && f.wire === 0) elements *= t.varint();
        else if (f.field === TENSOR_DIMS && f.wire === 2) {
          const packed = t.sub();
          while (!packed.done) elements *= packed.varint();
        } else if (f.field === TENSOR_RAW_DATA && f.wire === 2) {
          const { start, end } = t.bytes();
          raw = end - start;
        } else t.skip(f.wire);
      }
      // Without raw_data, float16 values sit one per varint in int32_data: two bytes each in memory.
      if (type === ONNX_FLOAT16) float16WeightBytes += raw >= 0 ? raw : 2 * elements;
    } else graph.skip(wire);
  }
  if (outputs.length === 0) throw new OnnxFormatError('the graph has no outputs');
  return { inputs: inputs.filter((i) => !initializers.has(i.name)), outputs, float16WeightBytes };
}
