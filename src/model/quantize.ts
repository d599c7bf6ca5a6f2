// Static int8 quantisation (QDQ form) of a float ONNX model from a calibration table.
//
// Every Conv gets: its input activation through QuantizeLinear/DequantizeLinear (uint8, per tensor,
// range from the table), its weights as int8 per output channel (symmetric), its bias as int32 at
// scale input×weight, and its output quantised again. ONNX Runtime fuses each DQ→Conv→Q group into
// one QLinearConv, which runs on the CPU's int8 dot-product instructions (AVX512-VNNI / AVX-VNNI).
// A Conv followed only by a Relu loses the Relu: a uint8 output with zero point 0 clamps at 0 already.
// MaxPool and Resize keep their input's scale (ORT then runs them on bytes), Concat and Add get
// quantised outputs (QLinearConcat / QLinearAdd), so tensors stay uint8 between the convolutions.
// Convs named in the table's `float` list keep float weights. docs/models.md has the measurements.
import { loadOnnx, type Proto } from './onnx-transform.js';

export interface CalibrationTable {
  description: string;
  /** Conv node names kept in float. */
  float: string[];
  /** Activation tensor name → [lo, hi] clipping range observed on the calibration photos. */
  ranges: Record<string, [number, number]>;
}

const FLOAT = 1;
const UINT8 = 2;
const INT8 = 3;
const INT32 = 6;

interface QuantParams {
  scale: number;
  zeroPoint: number;
}

/** uint8 affine parameters covering [lo, hi] and always 0 (so zero padding stays exact). */
export function activationParams(lo: number, hi: number): QuantParams {
  const a = Math.min(0, lo);
  const b = Math.max(0, hi);
  const scale = Math.fround((b - a) / 255) || Math.fround(1e-8);
  const zeroPoint = Math.min(255, Math.max(0, Math.round(-a / scale)));
  return { scale, zeroPoint };
}

/** Symmetric int8 weights per output channel (axis 0): returns the codes and one scale per channel. */
export function quantizeWeights(w: Float32Array, channels: number): { codes: Int8Array; scales: Float32Array } {
  const per = w.length / channels;
  const codes = new Int8Array(w.length);
  const scales = new Float32Array(channels);
  for (let o = 0; o < channels; o++) {
    let max = 0;
    for (let i = 0; i < per; i++) max = Math.max(max, Math.abs(w[o * per + i]!));
    const s = Math.fround(max / 127) || Math.fround(1e-8);
    scales[o] = s;
    for (let i = 0; i < per; i++) codes[o * per + i] = Math.max(-127, Math.min(127, Math.round(w[o * per + i]! / s)));
  }
  return { codes, scales };
}

function floatData(t: Proto): Float32Array {
  if (t.dataType !== FLOAT) throw new Error(`Initializer ${t.name} is not float32 (type ${t.dataType})`);
  if (t.rawData && t.rawData.length > 0) {
    const raw: Uint8Array = t.rawData;
    return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  }
  return Float32Array.from(t.floatData as number[]);
}

export interface QuantizeStats {
  convs: number;
  floatConvs: number;
  relusFolded: number;
  /** MaxPool, Resize, Concat and Add nodes that now run on uint8 (their tensors stay quantised). */
  int8Ops: number;
  identityCastsRemoved: number;
}

/** Ops that pass uint8 through unchanged in range: their output reuses the input's parameters. */
const SAME_RANGE_OPS = new Set(['MaxPool', 'Resize']);

/** A float tensor's DQ output, and the scale and range it was quantised with. */
interface Dequantized {
  name: string;
  scale: number;
  range: [number, number];
}

/**
 * The rewrite in progress: the initializers it adds, the nodes it places before and after each graph
 * node, and the float tensors that already have a DQ output (reused by every later consumer).
 */
class QdqRewrite {
  readonly added: Proto[] = [];
  readonly before = new Map<Proto, Proto[]>();
  readonly after = new Map<Proto, Proto[]>();
  // Float tensor name → the DQ output carrying it, and the range it was quantised with.
  readonly dequantized = new Map<string, Dequantized>();
  private uid = 0;

  constructor(
    private readonly onnx: Proto,
    private readonly table: CalibrationTable,
    private readonly aliases: Map<string, string>,
  ) {}

  /** A fresh number for the names of the next group of added tensors and nodes. */
  nextId(): number {
    return this.uid++;
  }

  tensor(name: string, dataType: number, dims: number[], data: ArrayBufferView): string {
    this.added.push(
      this.onnx.TensorProto.create({
        name,
        dataType,
        dims,
        rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      }),
    );
    return name;
  }

  node(opType: string, name: string, input: string[], output: string[], axis?: number): Proto {
    return this.onnx.NodeProto.create({
      opType,
      name,
      input,
      output,
      attribute: axis === undefined ? [] : [this.onnx.AttributeProto.create({ name: 'axis', type: 2, i: axis })],
    });
  }

  measured(name: string): [number, number] | undefined {
    const r = this.table.ranges[name];
    if (r) return r;
    // A removed cast's output was measured under its own name: the same values as its input.
    for (const [out, input] of this.aliases) if (input === name && this.table.ranges[out]) return this.table.ranges[out];
    return undefined;
  }

  range(name: string): [number, number] {
    const r = this.measured(name);
    if (!r) throw new Error(`Calibration table has no range for tensor '${name}'`);
    return r;
  }

  /** Has a DQ output already, or a range to make one from. */
  known(name: string): boolean {
    return this.dequantized.has(name) || this.measured(name) !== undefined;
  }

  place(where: Map<Proto, Proto[]>, at: Proto, nodes: Proto[]): void {
    where.set(at, [...(where.get(at) ?? []), ...nodes]);
  }

  qdq(k: number, input: string, output: string, r: [number, number]): { nodes: Proto[]; scale: number } {
    const { scale, zeroPoint } = activationParams(...r);
    const s = this.tensor(`qa${k}.scale`, FLOAT, [], new Float32Array([scale]));
    const z = this.tensor(`qa${k}.zero`, UINT8, [], new Uint8Array([zeroPoint]));
    return {
      nodes: [this.node('QuantizeLinear', `qa${k}.Q`, [input, s, z], [`qa${k}.q`]), this.node('DequantizeLinear', `qa${k}.DQ`, [`qa${k}.q`, s, z], [output])],
      scale,
    };
  }

  /** Q→DQ pair on a float tensor, placed before `at`; reused by every later consumer. */
  quantizeInput(name: string, at: Proto): Dequantized {
    const known = this.dequantized.get(name);
    if (known) return known;
    const k = this.nextId();
    const r = this.range(name);
    const { nodes, scale } = this.qdq(k, name, `qa${k}.dq`, r);
    this.place(this.before, at, nodes);
    const out = { name: `qa${k}.dq`, scale, range: r };
    this.dequantized.set(name, out);
    return out;
  }

  /**
   * Quantise a node's output in place: the node writes `<name>.f`, a Q→DQ pair restores `<name>`, so
   * consumers see a DQ output and ONNX Runtime can fuse the node with its neighbours.
   */
  quantizeOutput(n: Proto, r: [number, number]): void {
    const name = n.output[0];
    const k = this.nextId();
    n.output[0] = `${name}.f`;
    const { nodes, scale } = this.qdq(k, n.output[0], name, r);
    this.place(this.after, n, nodes);
    this.dequantized.set(name, { name, scale, range: r });
  }
}

/** uint8 in, uint8 out with the same scale: ONNX Runtime drops the Q/DQ pair and runs it on bytes. */
function quantizeSameRange(q: QdqRewrite, n: Proto): void {
  const x = q.quantizeInput(n.input[0], n);
  n.input[0] = x.name;
  q.quantizeOutput(n, x.range);
}

/** Concat or Add on uint8 inputs, its output quantised (QLinearConcat / QLinearAdd). */
function quantizeMerge(q: QdqRewrite, n: Proto): void {
  const xs = n.input.map((i: string) => q.quantizeInput(i, n));
  n.input = xs.map((x: { name: string }) => x.name);
  // A calibrated range when the output was measured (it feeds a Conv); otherwise the widest the
  // inputs allow: their union for Concat, their sum for Add.
  const lo = xs.map((x: { range: [number, number] }) => x.range[0]);
  const hi = xs.map((x: { range: [number, number] }) => x.range[1]);
  const derived: [number, number] =
    n.opType === 'Concat' ? [Math.min(...lo), Math.max(...hi)] : [lo.reduce((a: number, b: number) => a + b, 0), hi.reduce((a: number, b: number) => a + b, 0)];
  q.quantizeOutput(n, q.measured(n.output[0]) ?? derived);
}

/** The Conv's weights as int8 per output channel and its bias as int32 at scale input×weight, each behind a DQ. */
function quantizeConvConstants(q: QdqRewrite, k: number, n: Proto, inits: Map<string, Proto>, inputScale: number): void {
  const W = inits.get(n.input[1]);
  if (!W) throw new Error(`Conv ${n.name} has no constant weights`);
  const dims = W.dims.map(Number) as number[];
  const { codes, scales } = quantizeWeights(floatData(W), dims[0]!);
  const wq = q.tensor(`qw${k}.q`, INT8, dims, codes);
  const ws = q.tensor(`qw${k}.scale`, FLOAT, [dims[0]!], scales);
  const wz = q.tensor(`qw${k}.zero`, INT8, [dims[0]!], new Int8Array(dims[0]!));
  const dq = [q.node('DequantizeLinear', `qw${k}.DQ`, [wq, ws, wz], [`qw${k}.dq`], 0)];
  n.input[1] = `qw${k}.dq`;
  if (n.input[2]) {
    const B = inits.get(n.input[2]);
    if (!B) throw new Error(`Conv ${n.name} has no constant bias`);
    const b = floatData(B);
    const bs = new Float32Array(b.length);
    const bq = new Int32Array(b.length);
    for (let o = 0; o < b.length; o++) {
      bs[o] = Math.fround(inputScale * scales[o]!);
      bq[o] = Math.round(b[o]! / bs[o]!);
    }
    dq.push(
      q.node(
        'DequantizeLinear',
        `qb${k}.DQ`,
        [
          q.tensor(`qb${k}.q`, INT32, [b.length], bq),
          q.tensor(`qb${k}.scale`, FLOAT, [b.length], bs),
          q.tensor(`qb${k}.zero`, INT32, [b.length], new Int32Array(b.length)),
        ],
        [`qb${k}.dq`],
        0,
      ),
    );
    n.input[2] = `qb${k}.dq`;
  }
  q.place(q.before, n, dq);
}

/** Conv → Relu: the Relu becomes the output Q (zero point 0), then a DQ restores its tensor name. */
function foldRelu(q: QdqRewrite, k: number, conv: Proto, relu: Proto): void {
  const [, hi] = q.range(relu.output[0]);
  const { scale } = activationParams(0, hi);
  const s = q.tensor(`qo${k}.scale`, FLOAT, [], new Float32Array([scale]));
  const z = q.tensor(`qo${k}.zero`, UINT8, [], new Uint8Array([0]));
  const name = relu.output[0];
  relu.opType = 'QuantizeLinear';
  relu.input = [conv.output[0], s, z];
  relu.output = [`qo${k}.q`];
  relu.attribute = [];
  q.after.set(relu, [q.node('DequantizeLinear', `qo${k}.DQ`, [`qo${k}.q`, s, z], [name])]);
  q.dequantized.set(name, { name, scale, range: [0, hi] });
}

/** One Conv: its input, weights and bias quantised, and a lone Relu after it folded. True when it folded one. */
function quantizeConv(q: QdqRewrite, n: Proto, inits: Map<string, Proto>, consumers: Map<string, Proto[]>): boolean {
  const k = q.nextId();
  const x = q.quantizeInput(n.input[0], n);
  n.input[0] = x.name;
  quantizeConvConstants(q, k, n, inits, x.scale);
  const users = consumers.get(n.output[0]) ?? [];
  const relu = users.length === 1 && users[0].opType === 'Relu' ? users[0] : undefined;
  if (relu) foldRelu(q, k, n, relu);
  return relu !== undefined;
}

export function quantizeInt8(model: Proto, table: CalibrationTable): QuantizeStats {
  const g = model.graph;
  // The graph widened from fp16 lists its casts last: the passes below need producers first.
  g.node = topologicalOrder(g);
  const aliases = removeIdentityCasts(g);
  const inits = new Map<string, Proto>(g.initializer.map((t: Proto) => [t.name, t]));
  const consumers = new Map<string, Proto[]>();
  for (const n of g.node) for (const i of n.input) consumers.set(i, [...(consumers.get(i) ?? []), n]);
  const keepFloat = new Set(table.float);
  const q = new QdqRewrite(loadOnnx(), table, aliases);
  const stats: QuantizeStats = { convs: 0, floatConvs: 0, relusFolded: 0, int8Ops: 0, identityCastsRemoved: aliases.size };
  for (const n of [...g.node]) {
    if (SAME_RANGE_OPS.has(n.opType) && q.known(n.input[0])) {
      // (The last Resize, of the final logits, has no range and stays float.)
      quantizeSameRange(q, n);
      stats.int8Ops++;
    } else if ((n.opType === 'Concat' || n.opType === 'Add') && n.input.every((i: string) => q.known(i))) {
      // (Concats of shape values are integer and never match: their inputs have no range.)
      quantizeMerge(q, n);
      stats.int8Ops++;
    } else if (n.opType === 'Conv' && keepFloat.has(n.name)) {
      stats.floatConvs++;
    } else if (n.opType === 'Conv') {
      stats.convs++;
      if (quantizeConv(q, n, inits, consumers)) stats.relusFolded++;
    }
  }
  const ordered: Proto[] = [];
  for (const n of g.node) ordered.push(...(q.before.get(n) ?? []), n, ...(q.after.get(n) ?? []));
  g.node = ordered;
  const used = new Set<string>();
  for (const n of g.node) for (const i of n.input) used.add(i);
  g.initializer = [...g.initializer.filter((t: Proto) => used.has(t.name)), ...q.added];
  // Shapes of the rewritten tensors are re-inferred at load; stale value_info would only mislead.
  g.valueInfo = [];
  return stats;
}

const FLOAT_OPS = new Set(['Conv', 'Relu', 'MaxPool', 'Resize', 'Add', 'Sigmoid', 'QuantizeLinear', 'DequantizeLinear']);

/**
 * Casts to float of tensors that are float already (left by widening an fp16 graph) sit between a
 * DequantizeLinear and its consumer and would stop ONNX Runtime's fusions: rewire around them.
 */
function removeIdentityCasts(g: Proto): Map<string, string> {
  const floatTensors = new Set<string>(g.input.map((i: Proto) => i.name));
  for (const t of g.initializer) if (t.dataType === FLOAT) floatTensors.add(t.name);
  const rename = new Map<string, string>();
  const graphOutputs = new Set<string>(g.output.map((o: Proto) => o.name));
  const kept: Proto[] = [];
  for (const n of g.node) {
    n.input = n.input.map((i: string) => rename.get(i) ?? i);
    const to = n.attribute.find((a: Proto) => a.name === 'to');
    if (n.opType === 'Cast' && Number(to?.i) === FLOAT && floatTensors.has(n.input[0]) && !graphOutputs.has(n.output[0])) {
      rename.set(n.output[0], n.input[0]);
      continue;
    }
    const floatOut = FLOAT_OPS.has(n.opType) || (n.opType === 'Cast' && Number(to?.i) === FLOAT) || (n.opType === 'Concat' && floatTensors.has(n.input[0]));
    if (floatOut) for (const o of n.output) floatTensors.add(o);
    kept.push(n);
  }
  g.node = kept;
  return rename;
}

/** Nodes in an order where every tensor is produced before it is read (stable otherwise). */
export function topologicalOrder(g: Proto): Proto[] {
  const available = new Set<string>([...g.input.map((i: Proto) => i.name), ...g.initializer.map((t: Proto) => t.name), '']);
  const producers = new Set<string>();
  for (const n of g.node) for (const o of n.output) producers.add(o);
  const waiting = new Map<string, Proto[]>();
  const missing = new Map<Proto, number>();
  const ready: Proto[] = [];
  for (const n of g.node) {
    const deps = new Set<string>(n.input.filter((i: string) => !available.has(i) && producers.has(i)));
    missing.set(n, deps.size);
    for (const d of deps) waiting.set(d, [...(waiting.get(d) ?? []), n]);
    if (deps.size === 0) ready.push(n);
  }
  const order: Proto[] = [];
  const index = new Map<Proto, number>(g.node.map((n: Proto, i: number) => [n, i]));
  while (ready.length) {
    // Smallest original index first keeps the order stable.
    ready.sort((a, b) => index.get(b)! - index.get(a)!);
    const n = ready.pop()!;
    order.push(n);
    for (const o of n.output) {
      for (const m of waiting.get(o) ?? []) {
        const left = missing.get(m)! - 1;
        missing.set(m, left);
        if (left === 0) ready.push(m);
      }
      waiting.delete(o);
    }
  }
  if (order.length !== g.node.length) throw new Error('Model graph has a cycle or reads a tensor nothing produces');
  return order;
}
