// One photo's staged halves (prepareRemoval + finishStaged, no model run) with the build of another
// checkout, for before/after comparisons of the CPU side (docs/gpu.md, "The CPU side"): every call
// goes to ROOT's dist, so an older worktree measures its own code.
//   node dist/bench/photo-stages-of.js ROOT PHOTO THREADS RUNS   → one JSON line of medians (ms; faults: minor page faults per photo)
// Run each checkout in turn, a few rounds, photo by photo. ROOT's block cache keeps its own default
// limit, as its pools run (no pool sets one: 1 GiB since the cache came; a 64 MB limit set here until
// 2026-11-29 cost the 1 MP photo ~450 page faults the pool never takes); the photo memory a
// finished photo leaves goes to the next up to ROOT's SparePhotos bound, as its pool hands it on.
// Runs in ROOT's bin/cutout malloc environment (bench/launch-env-rerun.ts) unless GLIBC_TUNABLES is set.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { rerunInLaunchEnv } from './launch-env-rerun.js';

const [root, file, threadsArg, runsArg] = process.argv.slice(2);
if (!root || !file) throw new Error('usage: photo-stages-of.js ROOT PHOTO [THREADS] [RUNS]');
await rerunInLaunchEnv(root);
const threads = Number(threadsArg ?? 1);
const runs = Number(runsArg ?? 5);
const load = (rel: string): Promise<any> => import(path.resolve(root, 'dist', 'src', rel));
const { loadBinding } = await load('native/binding.js');
const { modelEntry, sessionOptionsFor } = await load('model/manifest.js');
const pipeline = await load('worker/pipeline.js');
const codec = await load('worker/codec.js');
const { DEFAULT_OPTIONS, DEFAULT_QUALITY } = await load('domain/removal.js');
// The photo memory a finished photo leaves for the next, up to ROOT's bound, as ROOT's staged pool keeps it.
const spareMax: number = (await load('pool/spare-photos.js').catch(() => ({}))).SPARE_PHOTO_MAX_BYTES ?? 0;
let spare: ArrayBuffer | undefined;

const binding = loadBinding();
const model = modelEntry(undefined, 'cpu');
const session = new binding.Session(model.path, sessionOptionsFor(model.entry, 2));
const input = new Uint8Array(readFileSync(file));
const mask = Float32Array.from(session.infer((await codec.decodeForModel(input, 5e7, 1024, 1024)).data, 3));
session.close();

const ctx = { binding, model: { width: 1024, height: 1024 }, threads, quality: DEFAULT_QUALITY };
const samples: Record<string, number[]> = { wall: [], faults: [] };
const STAGES = ['decode', 'decodeOutput', 'composite', 'encode'];
for (let r = -2; r < runs; r++) {
  const task = { input, options: { ...DEFAULT_OPTIONS, size: 'full', format: 'png' }, ...(spare ? { photoMemory: spare } : {}) };
  spare = undefined;
  const photoMask = mask.slice(); // before the clock: the pool's masks come in memory it reuses
  const f0 = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  const prepared = await pipeline.prepareRemoval(ctx, task);
  if (!prepared.ok) throw new Error(prepared.message);
  const done = await pipeline.finishStaged(ctx, { ...task, plan: prepared.plan, mask: photoMask, timings: prepared.timings, ...(prepared.photo ? { photo: prepared.photo } : {}) });
  if (!done.ok) throw new Error(done.message);
  const left = prepared.photo?.buffer ?? prepared.unusedMemory;
  if (left instanceof ArrayBuffer && left.byteLength <= spareMax) spare = left;
  if (r < 0) continue;
  samples.wall!.push(performance.now() - t0);
  samples.faults!.push(process.resourceUsage().minorPageFault - f0);
  for (const s of STAGES) (samples[s] ??= []).push(done.timings[s] ?? 0);
}
const median = (v: number[]): number => [...v].sort((a, b) => a - b)[v.length >> 1]!;
console.log(JSON.stringify(Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Math.round(median(v) * 10) / 10]))));
