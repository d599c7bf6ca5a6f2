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

/** The node that computes a value: its operator and inputs (only read when asked: readOnnxSignatureFile's `nodes`). */
export interface OnnxProducer {
  op: string;
  inputs: string[];
}

export interface OnnxGraphFacts extends OnnxSignature {
  /** Value name → the node computing it. */
  producers: Map<string, OnnxProducer>;
}

/**
 * Why the bytes are no usable ONNX model, in words for whoever gave the file: `not-onnx` (its bytes
 * are not laid out as an ONNX model), `incomplete` (an ONNX model cut short: `present` of at least
 * `needed` bytes), or `damaged` (laid out as one, but its records do not fit together).
 * The message completes "The model file F is …".
 */
export class OnnxFormatError extends Error {
  constructor(
    message: string,
    readonly kind: 'not-onnx' | 'incomplete' | 'damaged',
    readonly present?: number,
    readonly needed?: number,
  ) {
    super(message);
    this.name = 'OnnxFormatError';
  }
}

const count = (n: number): string => n.toLocaleString('en-US');

/** ModelProto's fields (onnx.proto3) and their wire types: anything else at the top is not ONNX. */
const MODEL_FIELD_NAMES: Readonly<Record<number, string>> = {
  1: 'ir_version',
  2: 'producer_name',
  3: 'producer_version',
  4: 'domain',
  5: 'model_version',
  6: 'doc_string',
  7: 'graph',
  8: 'opset_import',
  14: 'metadata_props',
  20: 'training_info',
  25: 'functions',
  26: 'configuration',
};
const VARINT_MODEL_FIELDS = new Set([1, 5]);

const notOnnx = (why: string) => new OnnxFormatError(`not an ONNX file (${why})`, 'not-onnx');
const incomplete = (present: number, needed: number | undefined, inside: string) =>
  new OnnxFormatError(
    needed === undefined
      ? `incomplete (${count(present)} bytes, ending inside its ${inside}): copy or download it again`
      : `incomplete (${count(present)} of ${count(needed)} bytes, ending inside its ${inside}): copy or download it again`,
    'incomplete',
    present,
    needed,
  );
const damaged = () => new OnnxFormatError('damaged: it is laid out as an ONNX model, but its records do not fit together', 'damaged');

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
      // A name is read from the window (loaded at it when outside): node names come thousands at a
      // time, and one read each would cost a system call apiece.
      if (end - start <= WINDOW) {
        if (start < at || end > at + filled) load(start);
        return Buffer.from(window.subarray(start - at, end - at));
      }
      const out = Buffer.allocUnsafe(end - start);
      fs.readSync(fd, out, 0, end - start, start);
      return out;
    },
  };
}

/**
 * Reads one message's fields. `overrun` says what a field running past this message's end means:
 * at the top of the file, that the file was cut short (the file ends before the field does); inside
 * a message that fits in the file, that the records are damaged.
 */
class Reader {
  pos: number;
  /** The top-level field being read (for "ending inside its graph"). */
  field = 'first record';
  constructor(
    readonly src: ByteSource,
    start = 0,
    readonly end = src.length,
    readonly top = false,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  private overrun(needed?: number): OnnxFormatError {
    return this.top ? incomplete(this.src.length, needed, this.field) : damaged();
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw this.overrun();
      const b = this.src.byteAt(this.pos++);
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 128;
    }
    throw this.top ? notOnnx('its bytes are not laid out as an ONNX model') : damaged();
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
    if (start + len > this.end) throw this.overrun(start + len);
    this.pos = start + len;
    return { start, end: start + len };
  }

  string(): string {
    const { start, end } = this.bytes();
    if (end - start > 1 << 20) throw damaged(); // a name longer than 1 MiB
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
    else throw this.top ? notOnnx('its bytes are not laid out as an ONNX model') : damaged(); // wire types 3, 4 (groups), 6, 7: none in ONNX
    if (this.pos > this.end) throw this.overrun(this.pos);
  }
}

// Field numbers from onnx.proto3.
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_OP_TYPE = 4;
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

function readNode(r: Reader, producers: Map<string, OnnxProducer>): void {
  const node: OnnxProducer = { op: '', inputs: [] };
  const outputs: string[] = [];
  while (!r.done) {
    const { field, wire } = r.tag();
    if (field === NODE_INPUT && wire === 2) node.inputs.push(r.string());
    else if (field === NODE_OUTPUT && wire === 2) outputs.push(r.string());
    else if (field === NODE_OP_TYPE && wire === 2) node.op = r.string();
    else r.skip(wire);
  }
  for (const o of outputs) producers.set(o, node);
}

/** The graph's signature; throws OnnxFormatError when the bytes are not an ONNX model with a graph. */
export function readOnnxSignature(bytes: Uint8Array): OnnxSignature {
  return signatureOf(new Reader(memorySource(bytes), 0, bytes.length, true));
}

/**
 * The same, read from a file a window at a time (the weights are never read); with `nodes`, also
 * which node computes each value (the family checks' warnings: families.ts).
 */
export function readOnnxSignatureFile(file: string): OnnxSignature;
export function readOnnxSignatureFile(file: string, opts: { nodes: true }): OnnxGraphFacts;
export function readOnnxSignatureFile(file: string, opts?: { nodes: true }): OnnxSignature | OnnxGraphFacts {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    return signatureOf(new Reader(fileSource(fd, size), 0, size, true), opts?.nodes ? new Map() : undefined);
  } finally {
    fs.closeSync(fd);
  }
}

function signatureOf(model: Reader, producers?: Map<string, OnnxProducer>): OnnxSignature | OnnxGraphFacts {
  if (model.src.length === 0) throw notOnnx('it is empty');
  let graph: Reader | undefined;
  while (!model.done) {
    const { field, wire } = model.tag();
    const name = MODEL_FIELD_NAMES[field];
    // A JPEG, a zip, a text file or a safetensors header fails here, at its first bytes.
    if (name === undefined || wire !== (VARINT_MODEL_FIELDS.has(field) ? 0 : 2)) throw notOnnx('its bytes are not laid out as an ONNX model');
    model.field = name;
    if (field === MODEL_GRAPH) graph = model.sub();
    else model.skip(wire);
  }
  if (!graph) throw notOnnx('it holds no graph');
  const inputs: OnnxValue[] = [];
  const outputs: OnnxValue[] = [];
  const initializers = new Set<string>();
  let float16WeightBytes = 0;
  while (!graph.done) {
    const { field, wire } = graph.tag();
    if (field === GRAPH_NODE && wire === 2 && producers) readNode(graph.sub(), producers);
    else if (field === GRAPH_INPUT && wire === 2) inputs.push(readValueInfo(graph.sub()));
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
  if (outputs.length === 0) throw new OnnxFormatError('an ONNX model whose graph has no outputs', 'damaged');
  const sig = { inputs: inputs.filter((i) => !initializers.has(i.name)), outputs, float16WeightBytes };
  return producers ? { ...sig, producers } : sig;
}
