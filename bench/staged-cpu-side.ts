// The staged (GPU) pool's CPU side end to end, on any machine: the pool a GPU box runs, with the
// model replaced by a "replay" model that returns a fixed real mask in microseconds, so what is
// measured is everything but the GPU (decode, composite, encode, the transfers between threads, the
// release after each task), as a GPU box's photo workers would see it with an infinitely fast GPU.
//   node dist/bench/staged-cpu-side.js [--root CHECKOUT] [--photo FILE] [--concurrency 1,4] [--requests 24] [--photo-nice N] [--gap-ms MS]
// --root runs another checkout's build (an older worktree: before/after in one run, taking turns).
// The mask is the default CPU model's for the photo, made once here. Prints img/s and p50/p90 per
// concurrency, the process's peak RSS during the level and its RSS a second after, its minor page
// faults per request (every thread), as one JSON line per level, with the median of each Server-Timing stage.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadBinding } from '../src/native/binding.js';
import { loadOnnx } from '../src/model/onnx-transform.js';
import { modelEntry, sessionOptionsFor } from '../src/model/manifest.js';
import * as codec from '../src/worker/codec.js';
import { quantile } from './stats.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}

/** uint8 [N, H, W, 3] in → the fixed `mask` for every photo of the batch, float [N, 1, H, W]. */
function replayModel(mask: Float32Array, width: number, height: number): Uint8Array {
  const onnx = loadOnnx();
  const FLOAT = 1;
  const UINT8 = 2;
  const INT64 = 7;
  const i64 = (name: string, values: number[]) => onnx.TensorProto.create({ name, dataType: INT64, dims: [values.length], rawData: new Uint8Array(new BigInt64Array(values.map(BigInt)).buffer) });
  const graph = onnx.GraphProto.create({
    name: 'replay',
    input: [onnx.ValueInfoProto.create({ name: 'pixels', type: { tensorType: { elemType: UINT8, shape: { dim: [{ dimParam: 'N' }, { dimValue: height }, { dimValue: width }, { dimValue: 3 }] } } } })],
    output: [onnx.ValueInfoProto.create({ name: 'output', type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: 'N' }, { dimValue: 1 }, { dimValue: height }, { dimValue: width }] } } } })],
    initializer: [
      onnx.TensorProto.create({ name: 'mask', dataType: FLOAT, dims: [1, 1, height, width], rawData: new Uint8Array(mask.buffer, mask.byteOffset, mask.byteLength) }),
      i64('start', [0]),
      i64('end', [1]),
      i64('rest', [1, height, width]),
    ],
    node: [
      onnx.NodeProto.create({ opType: 'Shape', input: ['pixels'], output: ['shape'] }),
      onnx.NodeProto.create({ opType: 'Slice', input: ['shape', 'start', 'end'], output: ['n'] }),
      onnx.NodeProto.create({ opType: 'Concat', input: ['n', 'rest'], output: ['target'], attribute: [onnx.AttributeProto.create({ name: 'axis', type: 2, i: 0 })] }),
      onnx.NodeProto.create({ opType: 'Expand', input: ['mask', 'target'], output: ['output'] }),
    ],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'cutout-bench', graph });
  return onnx.ModelProto.encode(model).finish();
}

const root = path.resolve(arg('root', process.cwd()));
const photoFile = arg('photo', path.join('bench', '.photos', 'nuthatch-1mp.jpg'));
const levels = arg('concurrency', '1,4').split(',').map(Number);
const requests = Number(arg('requests', '24'));
const photoNice = Number(arg('photo-nice', '0'));
// Idle time a lane waits after each answer before its next request (0: back to back).
const gapMs = Number(arg('gap-ms', '0'));
const input = fs.readFileSync(photoFile);

// The real mask of this photo, from the default CPU model (this checkout's addon).
const binding = loadBinding();
const model = modelEntry(undefined, 'cpu');
const { width, height } = model.entry.input;
const session = new binding.Session(model.path, sessionOptionsFor(model.entry, os.availableParallelism()));
const mask = Float32Array.from(session.infer((await codec.decodeForModel(input, 5e7, width, height, await codec.probe(input))).data, 3));
session.close();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-replay-'));
const modelPath = path.join(dir, 'replay.onnx');
fs.writeFileSync(modelPath, replayModel(mask, width, height));

const { createRemovalPool } = await import(path.join(root, 'dist', 'src', 'pool', 'pool.js'));
const { DEFAULT_OPTIONS } = await import(path.join(root, 'dist', 'src', 'domain', 'removal.js'));
const pool = await createRemovalPool({ model: 'isnet-fp16-batch', modelPath, device: 'cpu', warmUp: false, ...(photoNice ? { photoNice } : {}) });
try {
  // Each request's stage timings (Server-Timing's), for the level's medians.
  let timings: Record<string, number>[] = [];
  const once = async (): Promise<number> => {
    const t0 = performance.now();
    const r = await pool.run({ input: new Uint8Array(input), options: { ...DEFAULT_OPTIONS, size: 'full', format: 'png' } });
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
    timings.push(r.timings);
    return performance.now() - t0;
  };
  for (let i = 0; i < 3; i++) await once(); // warm-up
  for (const c of levels) {
    const ms: number[] = [];
    timings = [];
    let next = 0;
    // The process's RSS (workers are its threads) every 20 ms: the level's peak.
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const f0 = process.resourceUsage().minorPageFault;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: c }, async () => {
      while (next++ < requests) {
        ms.push(await once());
        if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
      }
    }));
    const wall = performance.now() - t0;
    const faultsPerRequest = Math.round((process.resourceUsage().minorPageFault - f0) / requests);
    clearInterval(sampler);
    const r1 = (v: number) => Math.round(v * 10) / 10;
    // Idle again: what the pool still holds a second later (kept scratch and put-off garbage gone).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idleRssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
    const stages = Object.fromEntries([...new Set(timings.flatMap((s) => Object.keys(s)))].map((k) => [k, r1(quantile(timings.map((s) => s[k] ?? 0), 0.5))]));
    console.log(JSON.stringify({ root, photo: path.basename(photoFile), photoNice, gapMs, concurrency: c, requests, imgPerS: r1((requests * 1000) / wall), p50: r1(quantile(ms, 0.5)), p90: r1(quantile(ms, 0.9)), peakRssMb: Math.round(peak / 2 ** 20), idleRssMb, faultsPerRequest, stages }));
  }
} finally {
  await pool.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
