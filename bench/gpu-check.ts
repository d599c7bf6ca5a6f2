// gpu-check: the GPU test subset, run on a GPU box (bench/gpu/remote.sh); CI has no
// GPU, so these checks live here rather than in test/. Three parts, each pass or fail:
//
//   masks   the batch model on the device against the CPU fp32 reference on every photo of
//           ../shared/eval/dev (model input as the pipeline makes it: decodeForModel, 1024² RGB):
//           IoU of the masks at 0.5 ≥ --min-iou (0.98) for every photo; min/median IoU and MAE
//   timing  BatchSession.run at each batch size, pinned host buffers on and off: median ms per run
//           of --runs runs after a warm-up of every bucket, ms per image (the target:
//           ≤ 4 ms per image at the best batch size; reported, a failure only with --strict-timing)
//   load    createRemovalPool({ device }) (the staged pool), --load concurrent requests of eval
//           photos at size=full: all succeed, fewer batches than requests, and each result has the
//           dimensions and foreground box of the same photo run alone
//
// Prints a summary, writes bench/results/gpu-check.json (--out DIR), exits 1 on any failure.
//
//   node dist/bench/gpu-check.js                       on the GPU box (defaults: cuda, all photos,
//                                                      batches 1..32, 20 runs, pinned on and off, 64)
//   node dist/bench/gpu-check.js --device cpu --photos 2 --batches 1,2 --runs 2 --load 4
//                                                      the same checks, reduced, on a CPU-only machine
//   options: --device cuda|cuda:N|cpu  --photos N  --batches 1,2,4,8,16,32  --runs N  --pinned on,off
//            --load N  --max-batch N (masks and load; default 8)  --min-iou X  --parts masks,timing,load
//            --strict-timing  --out DIR
//            --model-file F --model-family N  check a model file of one's own instead of the bundled
//                              batch model (a file with a symbolic batch runs batched on
//                              CUDA); the load part runs it with fileBatching on, the CPU too
//            --reference FILE  the fp32 CPU masks from a file instead of the fp32 model (the box then
//                              needs no isnet-fp32: ~80 MB less to carry); --write-reference FILE
//                              computes them here, writes the file and exits. Format: 'CUTOUTREF1',
//                              JSON header length (u32 LE), JSON {ids, width, height}, then each
//                              photo's mask as u16 LE (alpha × 65535), in the header's order

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { parseDevice } from '../src/domain/device-request.js';
import { checkModelFile, sessionOptionsForFile, type ModelFile } from '../src/model/families.js';
import { parseModelFamily } from '../src/domain/model-family.js';
import { modelEntry, PACKAGE_ROOT, type SessionOptions } from '../src/model/manifest.js';
import { loadBinding, sessionOptionsFor, type BatchSessionOptions } from '../src/native/binding.js';
import { createRemovalPool } from '../src/pool/pool.js';
import { DEFAULT_OPTIONS } from '../src/domain/removal.js';
import type { RemoveResult, RemoveSuccess } from '../src/pool/protocol.js';
import { evalDir } from './quality/eval-dir.js';
import { parseManifest } from './quality/manifest.js';
import { iou, mae } from './quality/metrics.js';
import { decodeForModel, probe } from '../src/worker/codec.js';
import { cpuInfo } from '../test/harness/soak-driver.js';
import { median, quantile } from '../test/harness/stats.js';

const PARTS = ['masks', 'timing', 'load'] as const;
type Part = (typeof PARTS)[number];
/** The issue's target for the best batch size on one H100. */
const TARGET_MS_PER_IMAGE = 4;

interface Options {
  device: string;
  photos: number | undefined;
  batches: number[];
  runs: number;
  pinned: boolean[];
  load: number;
  maxBatch: number;
  minIou: number;
  parts: Part[];
  strictTiming: boolean;
  out: string;
  reference: string | undefined;
  writeReference: string | undefined;
  /** A model file of one's own, checked against its family (or undefined: the bundled batch model). */
  modelFile: ModelFile | undefined;
}

const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const ints = (name: string, s: string): number[] =>
  s.split(',').map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`Expected positive integers for --${name} but received '${s}'`);
    return n;
  });

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      device: { type: 'string', default: 'cuda' },
      photos: { type: 'string' },
      batches: { type: 'string', default: '1,2,4,8,16,32' },
      runs: { type: 'string', default: '20' },
      pinned: { type: 'string', default: 'on,off' },
      load: { type: 'string', default: '64' },
      'max-batch': { type: 'string', default: '8' },
      'min-iou': { type: 'string', default: '0.98' },
      parts: { type: 'string', default: PARTS.join(',') },
      'strict-timing': { type: 'boolean', default: false },
      out: { type: 'string', default: path.join(PACKAGE_ROOT, 'bench', 'results') },
      reference: { type: 'string' },
      'write-reference': { type: 'string' },
      'model-file': { type: 'string' },
      'model-family': { type: 'string' },
    },
  });
  const family = values['model-family'] === undefined ? undefined : parseModelFamily(values['model-family']);
  if (values['model-family'] !== undefined && !family) throw new Error(`Unknown --model-family '${values['model-family']}'`);
  const modelFile = values['model-file'] === undefined ? undefined : checkModelFile({ file: values['model-file'], family });
  const { width, height } = modelEntry('isnet-fp16-batch').entry.input;
  if (modelFile && (modelFile.convention.input.width !== width || modelFile.convention.input.height !== height)) {
    throw new Error(
      `--model-file: its masks are held to the bundled model's at ${width}x${height}; this file's input is ${modelFile.convention.input.width}x${modelFile.convention.input.height}`,
    );
  }
  if (modelFile && modelFile.batch !== 'symbolic') throw new Error("--model-file: the file's batch dimension is fixed: it cannot run batched");
  const device = parseDevice(values.device);
  if (device.kind === 'auto') throw new Error("Expected cuda, cuda:N or cpu for --device but received 'auto'");
  const parts = values.parts.split(',').map((p) => {
    if (!(PARTS as readonly string[]).includes(p)) throw new Error(`Expected ${PARTS.join(', ')} for --parts but received '${p}'`);
    return p as Part;
  });
  const pinned = values.pinned.split(',').map((p) => {
    if (p !== 'on' && p !== 'off') throw new Error(`Expected on and/or off for --pinned but received '${values.pinned}'`);
    return p === 'on';
  });
  return {
    device: values.device,
    photos: values.photos === undefined ? undefined : ints('photos', values.photos)[0],
    batches: ints('batches', values.batches).sort((a, b) => a - b),
    runs: ints('runs', values.runs)[0]!,
    pinned,
    load: ints('load', values.load)[0]!,
    maxBatch: ints('max-batch', values['max-batch'])[0]!,
    minIou: Number(values['min-iou']),
    parts,
    strictTiming: values['strict-timing'],
    out: path.resolve(values.out),
    reference: values.reference,
    writeReference: values['write-reference'],
    modelFile,
  };
}

/** What is checked: the bundled batch model, or the model file given. */
function candidate(opts: Options): { path: string; name: string; session: (threads: number) => SessionOptions } {
  const m = opts.modelFile;
  if (m) return { path: m.path, name: path.basename(m.path), session: (threads) => sessionOptionsForFile(m, threads) };
  const batch = modelEntry('isnet-fp16-batch');
  return { path: batch.path, name: batch.name, session: (threads) => sessionOptionsFor(batch.entry, threads) };
}

interface EvalPhoto {
  id: string;
  file: string;
  /** Model-sized RGB (1024² × 3), as the pipeline's prepare stage makes it. */
  modelInput: Uint8Array;
}

async function loadPhotos(limit: number | undefined, width: number, height: number): Promise<EvalPhoto[]> {
  const dir = evalDir();
  const rows = parseManifest(fs.readFileSync(path.join(dir, 'manifest.csv'), 'utf8'));
  const out: EvalPhoto[] = [];
  for (const row of rows.slice(0, limit ?? rows.length)) {
    const file = path.join(dir, row.imagePath);
    const bytes = fs.readFileSync(file);
    // As the pipeline does: the addon's resize where the model enlarges an opaque photo.
    const raw = await decodeForModel(bytes, 50_000_000, width, height, await probe(bytes));
    if (raw.channels !== 3) throw new Error(`${row.id}: expected 3 channels from decodeForModel, got ${raw.channels}`);
    out.push({ id: row.id, file, modelInput: new Uint8Array(raw.data.buffer, raw.data.byteOffset, raw.data.byteLength) });
  }
  return out;
}

function batchOptions(opts: Options, maxBatch: number, pinned?: boolean): BatchSessionOptions {
  const device = parseDevice(opts.device);
  const threads = device.kind === 'cuda' ? 1 : os.availableParallelism();
  const cudaOptions = process.env.CUTOUT_CUDA_OPTIONS;
  return {
    ...candidate(opts).session(threads),
    device: device.kind === 'cuda' ? 'cuda' : 'cpu',
    deviceId: device.index,
    maxBatch,
    ...(pinned === undefined ? {} : { pinned }),
    ...(cudaOptions && device.kind === 'cuda' ? { cudaOptions } : {}),
  };
}

interface MaskReport {
  pass: boolean;
  minIouRequired: number;
  photos: Array<{ id: string; iou: number; mae: number }>;
  minIou: number;
  medianIou: number;
  meanMae: number;
  maxMae: number;
  failures: string[];
  referenceMsPerPhoto: number;
  candidateMsPerPhoto: number;
}

const REFERENCE_MAGIC = 'CUTOUTREF1';
/** How the reference's model inputs were made; a file from another way is refused, not compared. */
const REFERENCE_MODEL_INPUT = 'pipeline-2026-11-26 (addon resize for enlarged opaque photos)';

/** The fp32 model's masks on the CPU, one per photo (the reference the device must agree with). */
function referenceMasks(photos: EvalPhoto[]): { masks: Float32Array[]; ms: number; width: number; height: number } {
  const binding = loadBinding();
  const fp32 = modelEntry('isnet-fp32');
  const { width, height } = fp32.entry.input;
  const reference = new binding.Session(fp32.path, sessionOptionsFor(fp32.entry, os.availableParallelism()));
  const masks: Float32Array[] = [];
  const t0 = performance.now();
  try {
    for (const p of photos) masks.push(reference.infer(p.modelInput, 3).slice());
  } finally {
    reference.close();
  }
  return { masks, ms: (performance.now() - t0) / photos.length, width, height };
}

function writeReference(file: string, photos: EvalPhoto[]): void {
  const { masks, width, height } = referenceMasks(photos);
  const header = Buffer.from(JSON.stringify({ ids: photos.map((p) => p.id), width, height, modelInput: REFERENCE_MODEL_INPUT }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  const body = masks.map((m) => {
    const q = Buffer.alloc(m.length * 2);
    for (let i = 0; i < m.length; i++) q.writeUInt16LE(Math.round(Math.min(1, Math.max(0, m[i]!)) * 65535), i * 2);
    return q;
  });
  fs.writeFileSync(file, Buffer.concat([Buffer.from(REFERENCE_MAGIC), len, header, ...body]));
}

function readReference(file: string, photos: EvalPhoto[], width: number, height: number): Float32Array[] {
  const buf = fs.readFileSync(file);
  if (buf.subarray(0, REFERENCE_MAGIC.length).toString() !== REFERENCE_MAGIC) throw new Error(`${file} is not a gpu-check reference file`);
  const len = buf.readUInt32LE(REFERENCE_MAGIC.length);
  const start = REFERENCE_MAGIC.length + 4;
  const head = JSON.parse(buf.subarray(start, start + len).toString()) as { ids: string[]; width: number; height: number; modelInput?: string };
  if (head.modelInput !== REFERENCE_MODEL_INPUT) throw new Error(`${file} was made from model inputs of an older pipeline: write it again (--write-reference)`);
  if (head.width !== width || head.height !== height) throw new Error(`${file}: masks of ${head.width}×${head.height}, the model makes ${width}×${height}`);
  const size = width * height * 2;
  return photos.map((p) => {
    const k = head.ids.indexOf(p.id);
    if (k < 0) throw new Error(`${file} has no mask for ${p.id}`);
    const at = start + len + k * size;
    const out = new Float32Array(width * height);
    for (let i = 0; i < out.length; i++) out[i] = buf.readUInt16LE(at + i * 2) / 65535;
    return out;
  });
}

function checkMasks(opts: Options, photos: EvalPhoto[]): MaskReport {
  const binding = loadBinding();
  const { width, height } = modelEntry('isnet-fp16-batch').entry.input;
  let refMasks: Float32Array[];
  let referenceMs = NaN; // not measured when the masks come from a file
  if (opts.reference) refMasks = readReference(opts.reference, photos, width, height);
  else ({ masks: refMasks, ms: referenceMs } = referenceMasks(photos));
  let t0: number;

  const candidateSession = new binding.BatchSession(candidate(opts).path, batchOptions(opts, opts.maxBatch));
  const candMasks: Float32Array[] = [];
  let candidateMs = 0;
  try {
    candidateSession.warmUp();
    t0 = performance.now();
    for (let i = 0; i < photos.length; i += opts.maxBatch) candMasks.push(...candidateSession.run(photos.slice(i, i + opts.maxBatch).map((p) => p.modelInput)));
    candidateMs = (performance.now() - t0) / photos.length;
  } finally {
    candidateSession.close();
  }

  const rows = photos.map((p, i) => {
    const ref = { width, height, data: refMasks[i]! };
    const cand = { width, height, data: candMasks[i]! };
    return { id: p.id, iou: round(iou(cand, ref), 5), mae: round(mae(cand, ref), 6) };
  });
  const failures = rows.filter((r) => !(r.iou >= opts.minIou)).map((r) => `masks: ${r.id} IoU ${r.iou} < ${opts.minIou}`);
  return {
    pass: failures.length === 0,
    minIouRequired: opts.minIou,
    photos: rows,
    minIou: Math.min(...rows.map((r) => r.iou)),
    medianIou: round(median(rows.map((r) => r.iou)), 5),
    meanMae: round(rows.reduce((a, r) => a + r.mae, 0) / rows.length, 6),
    maxMae: Math.max(...rows.map((r) => r.mae)),
    failures,
    referenceMsPerPhoto: Math.round(referenceMs),
    candidateMsPerPhoto: round(candidateMs),
  };
}

interface TimingReport {
  pass: boolean;
  runs: number;
  sessions: Array<{
    pinnedRequested: boolean;
    /** What the session got: page-locked buffers exist only with CUDA. */
    pinned: boolean;
    /** Why the session gave page-locked buffers up (ONNX Runtime's message), if it did. */
    pinnedError: string | null;
    buckets: number[];
    warmUpMs: number[];
    batches: Array<{ batch: number; medianMs: number; p90Ms: number; msPerImage: number; imagesPerS: number }>;
  }>;
  best: { batch: number; pinned: boolean; msPerImage: number; imagesPerS: number } | null;
  targetMsPerImage: number;
  targetMet: boolean;
  failures: string[];
}

function checkTiming(opts: Options, photos: EvalPhoto[]): TimingReport {
  const binding = loadBinding();
  const batch = candidate(opts);
  const maxBatch = Math.max(...opts.batches);
  const sessions: TimingReport['sessions'] = [];
  for (const pinned of opts.pinned) {
    const s = new binding.BatchSession(batch.path, batchOptions(opts, maxBatch, pinned));
    try {
      const warmUpMs = s.warmUp().map((ms) => round(ms));
      const rows: TimingReport['sessions'][number]['batches'] = [];
      for (const b of opts.batches) {
        const images = Array.from({ length: b }, (_, i) => photos[i % photos.length]!.modelInput);
        s.run(images); // once more at this size, outside the timing
        const ms: number[] = [];
        for (let r = 0; r < opts.runs; r++) {
          const t0 = performance.now();
          s.run(images);
          ms.push(performance.now() - t0);
        }
        const med = median(ms);
        rows.push({
          batch: b,
          medianMs: round(med, 2),
          p90Ms: round(quantile(ms, 0.9), 2),
          msPerImage: round(med / b, 3),
          imagesPerS: round((1000 * b) / med, 1),
        });
        console.error(
          `  timing: batch ${b}, pinned ${pinned ? 'on' : 'off'}${s.pinned === pinned ? '' : ' (not on this device)'}: ${round(med / b, 2)} ms per image (${round((1000 * b) / med, 1)} images/s)`,
        );
      }
      sessions.push({ pinnedRequested: pinned, pinned: s.pinned, pinnedError: s.pinnedError ?? null, buckets: s.buckets, warmUpMs, batches: rows });
    } finally {
      s.close();
    }
  }
  let best: TimingReport['best'] = null;
  for (const s of sessions)
    for (const b of s.batches)
      if (!best || b.msPerImage < best.msPerImage) best = { batch: b.batch, pinned: s.pinned, msPerImage: b.msPerImage, imagesPerS: b.imagesPerS };
  const targetMet = best !== null && best.msPerImage <= TARGET_MS_PER_IMAGE;
  const failures = opts.strictTiming && !targetMet ? [`timing: best ${best?.msPerImage} ms per image > ${TARGET_MS_PER_IMAGE}`] : [];
  return { pass: failures.length === 0, runs: opts.runs, sessions, best, targetMsPerImage: TARGET_MS_PER_IMAGE, targetMet, failures };
}

interface LoadReport {
  pass: boolean;
  requests: number;
  ok: number;
  /** Inference batches the concurrent requests took (the solo runs before them not counted). */
  batches: number;
  wallS: number;
  poolLine: string;
  mismatches: Array<{ photo: string; alone: Shape; loaded: Shape }>;
  failures: string[];
}

interface Shape {
  width: number;
  height: number;
  foreground: RemoveSuccess['foreground'];
}

const shape = (r: RemoveSuccess): Shape => ({ width: r.width, height: r.height, foreground: r.foreground });
const fresh = (bytes: Buffer): Uint8Array => new Uint8Array(bytes); // a copy that owns its buffer: run() transfers it

async function checkLoad(opts: Options, photos: EvalPhoto[]): Promise<LoadReport> {
  const device = parseDevice(opts.device);
  // The CUDA default model; cuDNN tunes each batch size at start as in production. On the CPU the
  // warm-up only costs time.
  const model = opts.modelFile ? { modelFile: opts.modelFile.path, modelFamily: opts.modelFile.family, fileBatching: true } : { model: 'isnet-fp16-batch' };
  const pool = await createRemovalPool({ device, ...model, maxBatch: opts.maxBatch, maxQueue: opts.load + 8, warmUp: device.kind === 'cuda' });
  const failures: string[] = [];
  try {
    const i = pool.info!;
    const poolLine = `${i.device.label} (${i.device.reason}); model ${i.model}; batches of up to ${i.batching?.maxBatch} on ${i.batching?.inferWorkers} inference worker(s); ${i.workers} photo workers`;
    const inputs = photos.map((p) => fs.readFileSync(p.file));
    const options = { ...DEFAULT_OPTIONS, size: 'full' as const, format: 'png' as const };
    const describe = (r: RemoveResult) => (r.ok ? 'ok' : `${r.code}: ${r.message}`);
    const alone: Shape[] = [];
    for (const [k, bytes] of inputs.entries()) {
      const r = await pool.run({ input: fresh(bytes), options });
      if (!r.ok) failures.push(`load: ${photos[k]!.id} alone failed (${describe(r)})`);
      alone.push(r.ok ? shape(r) : { width: 0, height: 0, foreground: { top: 0, left: 0, width: 0, height: 0 } });
    }
    const before = pool.stats().batches ?? 0;
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: opts.load }, (_, n) =>
        pool
          .run({ input: fresh(inputs[n % inputs.length]!), options })
          .catch((err: Error) => ({ ok: false as const, code: 'internal_error' as const, message: err.message })),
      ),
    );
    const wallS = (performance.now() - t0) / 1000;
    const batches = (pool.stats().batches ?? 0) - before;
    const mismatches: LoadReport['mismatches'] = [];
    results.forEach((r, n) => {
      const k = n % inputs.length;
      if (!r.ok) failures.push(`load: request ${n} (${photos[k]!.id}) failed (${describe(r)})`);
      else if (JSON.stringify(shape(r)) !== JSON.stringify(alone[k])) mismatches.push({ photo: photos[k]!.id, alone: alone[k]!, loaded: shape(r) });
    });
    for (const m of mismatches) failures.push(`load: ${m.photo} differs from its solo run: ${JSON.stringify(m.loaded)} vs ${JSON.stringify(m.alone)}`);
    if (!(batches < opts.load)) failures.push(`load: ${opts.load} concurrent requests took ${batches} batches (expected fewer than ${opts.load})`);
    return {
      pass: failures.length === 0,
      requests: opts.load,
      ok: results.filter((r) => r.ok).length,
      batches,
      wallS: round(wallS, 2),
      poolLine,
      mismatches,
      failures,
    };
  } finally {
    await pool.close();
  }
}

function gpuNames(): string[] | null {
  const r = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 && r.stdout
    ? r.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
    : null;
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const t0 = performance.now();
  const { width, height } = modelEntry('isnet-fp16-batch').entry.input;
  const photos = await loadPhotos(opts.photos, width, height);
  if (photos.length === 0) throw new Error(`no photos in ${evalDir()}`);
  if (opts.writeReference) {
    writeReference(opts.writeReference, photos);
    console.error(`gpu-check: wrote the fp32 CPU masks of ${photos.length} photos to ${opts.writeReference}`);
    return 0;
  }
  const report: Record<string, unknown> = {
    startedAt: new Date().toISOString(),
    device: opts.device,
    host: { cpu: cpuInfo(), gpus: gpuNames(), node: process.version, ort: loadBinding().ortVersion },
    options: { ...opts, out: undefined },
    model: candidate(opts).name,
    photos: photos.length,
  };
  const failures: string[] = [];
  const save = () => {
    fs.mkdirSync(opts.out, { recursive: true });
    fs.writeFileSync(
      path.join(opts.out, 'gpu-check.json'),
      `${JSON.stringify({ ...report, failures, pass: failures.length === 0, wallS: round((performance.now() - t0) / 1000) }, null, 2)}\n`,
    );
  };
  // A part that throws (a provider that does not load, say) is a failure of that part; the others still run.
  const part = async <T extends { failures: string[] }>(name: Part, fn: () => T | Promise<T>): Promise<T | undefined> => {
    if (!opts.parts.includes(name)) return undefined;
    console.error(`gpu-check: ${name} …`);
    try {
      const r = await fn();
      report[name] = r;
      failures.push(...r.failures);
      return r;
    } catch (err) {
      report[name] = { pass: false, error: (err as Error).message };
      failures.push(`${name}: ${(err as Error).message}`);
      return undefined;
    } finally {
      save();
    }
  };

  const masks = await part('masks', () => checkMasks(opts, photos));
  const timing = await part('timing', () => checkTiming(opts, photos));
  const load = await part('load', () => checkLoad(opts, photos));

  const lines = [`gpu-check on ${opts.device} (${photos.length} eval photos), ${round((performance.now() - t0) / 1000)} s`];
  if (masks)
    lines.push(
      `  masks:  ${masks.pass ? 'PASS' : 'FAIL'}  IoU min ${masks.minIou} median ${masks.medianIou} (≥ ${opts.minIou} each); MAE mean ${masks.meanMae} max ${masks.maxMae}; ${masks.candidateMsPerPhoto} ms per photo vs ${opts.reference ? 'fp32 CPU masks from ' + path.basename(opts.reference) : masks.referenceMsPerPhoto + ' ms fp32 on the CPU'}`,
    );
  if (timing) {
    lines.push(
      `  timing: ${timing.pass ? 'PASS' : 'FAIL'}  best ${round(timing.best?.msPerImage ?? NaN, 2)} ms per image at batch ${timing.best?.batch} (pinned ${timing.best?.pinned}, ${timing.best?.imagesPerS} images/s); target ≤ ${TARGET_MS_PER_IMAGE} ms ${timing.targetMet ? 'met' : 'not met'}`,
    );
    for (const s of timing.sessions) {
      const pinned = `pinned ${s.pinnedRequested ? 'on' : 'off'}${s.pinned === s.pinnedRequested ? '' : ' (not on this device)'}${s.pinnedError ? ` (given up: ${s.pinnedError.split('\n')[0]!.slice(0, 160)})` : ''}`;
      lines.push(`          ${pinned}: ${s.batches.map((b) => `batch ${b.batch} ${round(b.msPerImage, 2)}`).join(', ')} ms per image`);
    }
  }
  if (load)
    lines.push(
      `  load:   ${load.pass ? 'PASS' : 'FAIL'}  ${load.ok}/${load.requests} ok in ${load.batches} batches, ${load.wallS} s; ${load.mismatches.length} differ from their solo run; ${load.poolLine}`,
    );
  for (const f of failures) lines.push(`  FAIL ${f}`);
  lines.push(failures.length === 0 ? 'gpu-check: PASS' : `gpu-check: FAIL (${failures.length})`);
  console.log(lines.join('\n'));
  console.error(`gpu-check: wrote ${path.join(opts.out, 'gpu-check.json')}`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
