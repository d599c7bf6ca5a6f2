// The CPU side of one photo on the staged (GPU) path, without the model: what a GPU box's photo
// workers spend per photo, so how many photos per second its cores can feed the GPU.
//   npm run bench:photo-stages [-- --photos 0.5,1,4,12 --threads 1,4 --runs 7 --scratch off,kept --out DIR]
// In this process, no workers: prepareRemoval (probe, decode to the model input) and finishStaged
// (decode at output size, composite, encode) of src/worker/pipeline.ts, size=full PNG, the default
// quality, with the mask the int8 model gives for the photo (made once per photo, not timed).
// Per photo and thread count: the median of each stage and of the two halves' wall time, the minor
// page faults per photo (this process, every thread), and cores × 1000 / the wall time = the photos
// per second every core busy would give, at most. Also the model input made both ways side by side
// (libvips' resize with shrink-on-load, and the addon's from a decode at the photo's own size).
// Each row twice, interleaved run by run: with the block cache off (limit 0: every scratch block
// unmapped when freed, as a worker that hands its memory back after every task has it) and kept
// between photos (the pools' default, native/src/scratch.h, handed back only when the pool goes
// idle), with the photo memory the last photo left (src/pool/spare-photos.ts) as the pool hands it
// on. A "kept" run follows an unmeasured one in that mode: the "off" run before it gave every
// block back, and in the pool the previous photo has just left its blocks. Stage 1's decoded photo
// goes on to stage 2 where the plan decodes once, as the pool does.
// Runs in bin/cutout's malloc environment (bench/launch-env-rerun.ts) unless GLIBC_TUNABLES is set.
// Also the shadow stage alone (one thread, each kind at opacity 50, on the photo's own cut-out; 0 ms
// in the table above, where no shadow is asked).
// Prints the tables with lscpu's flags and writes photo-stages.json and .md to bench/results (or --out).
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_OPTIONS, DEFAULT_QUALITY } from '../src/domain/removal.js';
import { loadBinding } from '../src/native/binding.js';
import { modelEntry, PACKAGE_ROOT, sessionOptionsFor } from '../src/model/manifest.js';
import { SPARE_PHOTO_MAX_BYTES } from '../src/pool/spare-photos.js';
import type { PrepareResult, RemoveResult } from '../src/pool/protocol.js';
import * as codec from '../src/worker/codec.js';
import { finishStaged, prepareRemoval, type PipelineContext } from '../src/worker/pipeline.js';
import { cpuFacts } from './cpu-facts.js';
import { rerunInLaunchEnv } from './launch-env-rerun.js';
import { sizedBenchPhotos } from './photos.js';
import { markdownTable, median } from '../test/harness/stats.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}

await rerunInLaunchEnv();
const cpu = cpuFacts();
const sizes = arg('photos', '0.5,1,4,12').split(',');
const threadCounts = arg('threads', `1,${cpu.cores}`).split(',').map(Number);
const runs = Number(arg('runs', '7'));
// Which rows: both (the default), or one (`--scratch kept`: what a busy pool's photo workers see,
// in half the time).
const modes = arg('scratch', 'off,kept')
  .split(',')
  .filter((m): m is 'off' | 'kept' => m === 'off' || m === 'kept');
if (modes.length === 0) throw new Error('--scratch takes off, kept or off,kept');
const STAGES = ['probe', 'decode', 'decodeOutput', 'composite', 'layout', 'shadow', 'encode'] as const;
const SHADOW_KINDS = ['drop', '3D', 'car'] as const;

const binding = loadBinding();
/** The block cache's default limit (native/src/scratch.h), as the pools run with it. */
const SCRATCH_LIMIT = binding.scratchCache().limit;
const model = modelEntry(undefined, 'cpu');
const { width: mw, height: mh } = model.entry.input;
const session = new binding.Session(model.path, sessionOptionsFor(model.entry, cpu.cores));

interface Row {
  photo: string;
  size: string;
  width: number;
  height: number;
  threads: number;
  scratch: 'off' | 'kept';
  stages: Record<string, number>;
  wallMs: number;
  /** Minor page faults per photo (median), the whole process. */
  faults: number;
  photosPerSecondAllCores: number;
  modelInput: { libvipsMs: number; inMemoryMs: number | null };
}

/** The photo memory a finished photo leaves for the next (the pool's SparePhotos, one photo worker's share). */
let sparePhoto: ArrayBuffer | undefined;

/**
 * One photo through the staged path's two halves, stage 1's photo handed on as the pool hands it; with
 * `keep`, into the photo memory the last photo left, and leaving its own for the next, as the pool does.
 */
async function bothHalves(
  ctx: PipelineContext,
  input: Uint8Array,
  mask: Float32Array,
  name: string,
  keep: boolean,
): Promise<Extract<RemoveResult, { ok: true }>> {
  const photoMemory = keep ? sparePhoto : undefined;
  sparePhoto = undefined;
  const task = { input, options: { ...DEFAULT_OPTIONS, size: 'full' as const, format: 'png' as const }, ...(photoMemory ? { photoMemory } : {}) };
  const prepared = (await prepareRemoval(ctx, task)) as PrepareResult;
  if (!prepared.ok) throw new Error(`${name}: ${prepared.message}`);
  const { plan, timings, photo } = prepared;
  const done = (await finishStaged(ctx, { ...task, plan, mask, timings, ...(photo ? { photo } : {}) })) as RemoveResult;
  if (!done.ok) throw new Error(`${name}: ${done.message}`);
  const left = photo?.buffer ?? prepared.unusedMemory;
  if (keep && left instanceof ArrayBuffer && left.byteLength <= SPARE_PHOTO_MAX_BYTES) sparePhoto = left;
  return done;
}

const rows: Row[] = [];
const shadowRows: Array<{ photo: string; width: number; height: number; ms: Record<string, number> }> = [];

/** The shadow kinds drawn on the photo's cut-out, one thread, median of `runs` (the copy is not timed). */
async function timeShadows(input: Uint8Array, mask: Float32Array, probe: codec.Probe): Promise<Record<string, number>> {
  const cut = await codec.decodeRgba(input, 50e6, probe.width, probe.height, true);
  binding.compositeMask(cut.data, cut.width, cut.height, mask.slice(), mw, mh, { refine: true, decontaminate: true, threads: 1 });
  const ms: Record<string, number> = {};
  for (const type of SHADOW_KINDS) {
    const times: number[] = [];
    for (let r = -1; r < runs; r++) {
      const rgba = Uint8Array.from(cut.data);
      const t0 = performance.now();
      binding.drawShadow(rgba, cut.width, cut.height, { type, opacity: 50 });
      if (r >= 0) times.push(performance.now() - t0);
    }
    ms[type] = Math.round(median(times) * 10) / 10;
  }
  return ms;
}
for (const photo of await sizedBenchPhotos(sizes)) {
  const input = new Uint8Array(fs.readFileSync(photo.file));
  const probe = await codec.probe(input);
  const first = await codec.decodeForModel(input, 50e6, mw, mh, probe);
  const mask = Float32Array.from(session.infer(first.data, 3));
  // In memory: decodeForModel's own path where the model enlarges the photo; for another opaque photo,
  // the decode at its own size that the staged path may make once (RGBA) and the addon's resize.
  const enlarged = codec.resizesModelInputInMemory(probe, mw, mh);
  const inMemory = enlarged || !probe.hasAlpha;
  const inMemoryInput = async (threads: number): Promise<unknown> =>
    enlarged
      ? codec.decodeForModel(input, 50e6, mw, mh, probe, threads)
      : codec.resizeForModel(await codec.decodeRgba(input, 50e6, probe.width, probe.height, true), mw, mh, true, threads);
  shadowRows.push({ photo: photo.name, width: photo.width, height: photo.height, ms: await timeShadows(input, mask, probe) });
  for (const threads of threadCounts) {
    const ctx: PipelineContext = { binding, model: { width: mw, height: mh }, threads, quality: DEFAULT_QUALITY };
    const stageTimes = new Map<string, number[]>();
    const walls = new Map<string, number[]>();
    const faults = new Map<string, number[]>();
    const libvips: number[] = [];
    const memory: number[] = [];
    for (let r = -2; r < runs; r++) {
      for (const mode of modes) {
        binding.scratchCache(mode === 'kept' ? SCRATCH_LIMIT : 0);
        if (mode === 'kept') await bothHalves(ctx, input, mask.slice(), photo.name, true);
        // The mask's copy before the clock starts: the pool's masks come in memory it reuses
        // (src/pool/spare-masks.ts), not in a fresh 4 MB per photo.
        const photoMask = mask.slice();
        const f0 = process.resourceUsage().minorPageFault;
        const t0 = performance.now();
        const done = await bothHalves(ctx, input, photoMask, photo.name, mode === 'kept');
        const wall = performance.now() - t0;
        const took = process.resourceUsage().minorPageFault - f0;
        if (r < 0) continue;
        walls.set(mode, [...(walls.get(mode) ?? []), wall]);
        faults.set(mode, [...(faults.get(mode) ?? []), took]);
        for (const s of STAGES) stageTimes.set(`${mode}.${s}`, [...(stageTimes.get(`${mode}.${s}`) ?? []), done.timings[s] ?? 0]);
      }
      binding.scratchCache(SCRATCH_LIMIT);
      // Side by side: the model input through libvips, and in memory where that path applies.
      let t = performance.now();
      await codec.decodeForModel(input, 50e6, mw, mh);
      const libvipsMs = performance.now() - t;
      t = performance.now();
      if (inMemory) await inMemoryInput(threads);
      const memoryMs = performance.now() - t;
      if (r < 0) continue;
      libvips.push(libvipsMs);
      memory.push(memoryMs);
    }
    for (const mode of modes) {
      const stages = Object.fromEntries(STAGES.map((s) => [s, Math.round(median(stageTimes.get(`${mode}.${s}`)!) * 10) / 10]));
      const wallMs = Math.round(median(walls.get(mode)!) * 10) / 10;
      rows.push({
        photo: photo.name,
        size: photo.size,
        width: photo.width,
        height: photo.height,
        threads,
        scratch: mode,
        stages,
        wallMs,
        faults: median(faults.get(mode)!),
        photosPerSecondAllCores: Math.round(((cpu.cores * 1000) / wallMs) * 10) / 10,
        modelInput: { libvipsMs: Math.round(median(libvips) * 10) / 10, inMemoryMs: inMemory ? Math.round(median(memory) * 10) / 10 : null },
      });
      console.error(`${photo.name} threads ${threads} scratch ${mode}: ${wallMs} ms, ${median(faults.get(mode)!)} faults`);
    }
  }
}
session.close();

const table = markdownTable(
  [
    'photo',
    'threads',
    'scratch',
    ...STAGES,
    'wall ms',
    'minor faults per photo',
    `photos/s on ${cpu.cores} cores (threads 1)`,
    'model input: libvips / in memory ms',
  ],
  rows.map((r) => [
    `${r.photo} (${r.width}×${r.height})`,
    r.threads,
    r.scratch,
    ...STAGES.map((s) => r.stages[s]!),
    r.wallMs,
    r.faults,
    r.threads === 1 ? r.photosPerSecondAllCores : '–',
    `${r.modelInput.libvipsMs} / ${r.modelInput.inMemoryMs ?? '–'}`,
  ]),
);
console.log(
  `CPU: ${cpu.cores} × ${cpu.model} (${cpu.simd}); load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}\n`,
);
console.log(table);
const shadowTable = markdownTable(
  ['photo', ...SHADOW_KINDS.map((k) => `shadow ${k} ms (1 thread)`)],
  shadowRows.map((r) => [`${r.photo} (${r.width}×${r.height})`, ...SHADOW_KINDS.map((k) => r.ms[k]!)]),
);
console.log(`\n${shadowTable}`);
const out = arg('out', path.join(PACKAGE_ROOT, 'bench', 'results'));
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'photo-stages.json'), JSON.stringify({ date: new Date().toISOString(), cpu, runs, rows, shadows: shadowRows }, null, 1));
fs.writeFileSync(path.join(out, 'photo-stages.md'), `CPU: ${cpu.cores} × ${cpu.model} (${cpu.simd})\n\n${table}\n\n${shadowTable}\n`);
