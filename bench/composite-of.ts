// The composite stages (compositeMask: refine, matting, foreground colour; scratch kept as the staged
// pool keeps it) of one photo with several builds of the addon loaded side by side in one process,
// taking turns call by call, so the host's noise hits them alike (docs/native.md, "Cost of the matte stages"):
//   node dist/bench/composite-of.js --addon A.node --addon B.node --photo F [--runs 60] [--threads 1]
// An addon from another checkout needs its libonnxruntime.so.1 beside it. The mask is the default CPU
// model's for the photo (this checkout's build). Prints medians and quartiles, checks that every
// build gave the same bytes, and writes bench/results/composite-of.json with lscpu's flags. Builds
// whose compositeMask takes the `timings` option also get each stage's median (upsample, refine, ...).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadBinding, type NativeBinding } from '../src/native/binding.js';
import { PACKAGE_ROOT, modelEntry, sessionOptionsFor } from '../src/model/manifest.js';
import * as codec from '../src/worker/codec.js';
import { cpuFacts } from './cpu-facts.js';
import { markdownTable, median, quantile } from './stats.js';

const { values } = parseArgs({
  options: {
    addon: { type: 'string', multiple: true },
    photo: { type: 'string' },
    runs: { type: 'string', default: '60' },
    threads: { type: 'string', default: '1' },
    out: { type: 'string', default: path.join(PACKAGE_ROOT, 'bench', 'results') },
  },
});
const addons = values.addon ?? [];
if (addons.length === 0 || !values.photo) throw new Error('usage: composite-of.js --addon A.node [--addon B.node ...] --photo F [--runs N] [--threads T]');
const runs = Number(values.runs);
const threads = Number(values.threads);

const require = createRequire(import.meta.url);
const builds = addons.map((file) => ({
  file,
  binding: require(path.resolve(file)) as NativeBinding,
  ms: [] as number[],
  sha: new Set<string>(),
  stages: {} as Record<string, number[]>, // builds with the `timings` option (older ones ignore it)
}));
// Each build's block cache at its own default limit: blocks kept between photos, as the pools run.

const input = new Uint8Array(fs.readFileSync(values.photo));
const probe = await codec.probe(input);
const own = loadBinding();
const model = modelEntry(undefined, 'cpu');
const session = new own.Session(model.path, sessionOptionsFor(model.entry, 2));
const mask = Float32Array.from(session.infer((await codec.decodeForModel(input, 5e7, 1024, 1024, probe)).data, 3));
session.close();
const raw = await codec.decodeRgba(input, 5e7, probe.width, probe.height, true);
const photo = new Uint8Array(raw.data);
const px = new Uint8Array(photo.length);

for (let i = 0; i < runs; i++) {
  // Alternate the order too, so neither build always runs right after the other.
  const order = i % 2 ? [...builds].reverse() : builds;
  for (const b of order) {
    px.set(photo);
    const t0 = performance.now();
    const box = b.binding.compositeMask(px, raw.width, raw.height, mask, 1024, 1024, { refine: true, matting: true, decontaminate: true, threads, timings: true });
    b.ms.push(performance.now() - t0);
    for (const [stage, ms] of Object.entries(box.timings ?? {})) (b.stages[stage] ??= []).push(ms);
    if (i < 2) b.sha.add(crypto.createHash('sha256').update(px).digest('hex'));
  }
}

const same = new Set(builds.flatMap((b) => [...b.sha])).size === 1;
const facts = cpuFacts();
const rows = builds.map((b) => [b.file, median(b.ms).toFixed(1), quantile(b.ms, 0.25).toFixed(1), quantile(b.ms, 0.75).toFixed(1)]);
console.log(`${path.basename(values.photo)} ${raw.width}x${raw.height}, ${threads} thread(s), ${runs} runs each; ${facts.model}: ${facts.simd}`);
console.log(markdownTable(['addon', 'median ms', 'p25', 'p75'], rows));
const stageNames = [...new Set(builds.flatMap((b) => Object.keys(b.stages)))];
if (stageNames.length) {
  console.log('\nmedian ms per composite stage:');
  console.log(markdownTable(['addon', ...stageNames], builds.map((b) => [b.file, ...stageNames.map((s) => (b.stages[s] ? median(b.stages[s]!).toFixed(1) : '–'))])));
}
console.log(same ? 'same bytes from every build' : 'BUILDS DIFFER IN BYTES');
fs.mkdirSync(values.out!, { recursive: true });
const result = {
  photo: values.photo,
  width: raw.width,
  height: raw.height,
  threads,
  runs,
  sameBytes: same,
  cpu: facts,
  builds: builds.map((b) => ({
    addon: b.file,
    medianMs: median(b.ms),
    p25Ms: quantile(b.ms, 0.25),
    p75Ms: quantile(b.ms, 0.75),
    stagesMedianMs: Object.fromEntries(Object.entries(b.stages).map(([s, v]) => [s, median(v)])),
  })),
};
fs.writeFileSync(path.join(values.out!, 'composite-of.json'), `${JSON.stringify(result, null, 1)}\n`);
if (!same) process.exitCode = 1;
