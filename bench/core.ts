// npm run bench:core — one run, same photos, side by side: (a) raw onnxruntime-node inference,
// (b) our addon's inference, (c) our full pipeline, (d) @imgly/background-removal-node end to end.
// Each variant runs in its own child process so its peak RSS is its own; the pipeline variants in
// the environment bin/cutout gives the service. Prints a median table and writes bench/results/core.json.
//   npm run bench:core [-- --only=pipeline-int8,peer] [--photos=nuthatch-20mp,elephants-12mp-baseline] [--no-peer]
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { launchEnv } from '../src/process/launch-env.js';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { PACKAGE_ROOT, modelEntry } from '../src/model/manifest.js';
import { benchPhotos, type Photo } from './photos.js';
import { markdownTable, median, quantile } from '../test/harness/stats.js';

// The fp32 model throughout; the -int8 variants run the int8 model (the default) quantised from it.
type Variant = 'ort-node' | 'addon' | 'addon-int8' | 'pipeline' | 'pipeline-bilinear' | 'pipeline-int8' | 'peer';
const VARIANTS: Variant[] = ['ort-node', 'addon', 'addon-int8', 'pipeline', 'pipeline-bilinear', 'pipeline-int8', 'peer'];
const INT8_MODEL = 'isnet-int8';
const FP32_MODEL = 'isnet-fp32';
const THREADS = 2;

interface ChildResult {
  variant: Variant;
  photo: string;
  megapixels: number;
  times: number[];
  maxRssMb: number;
  stages?: Record<string, number>;
}

function runsFor(mp: number, variant: Variant): { warmup: number; runs: number } {
  if (variant === 'peer') return mp > 8 ? { warmup: 1, runs: 2 } : { warmup: 1, runs: 3 };
  return mp > 8 ? { warmup: 2, runs: 4 } : { warmup: 2, runs: 5 };
}

async function modelInputFor(file: string): Promise<Buffer> {
  const { width, height } = modelEntry().entry.input;
  return sharp(file).rotate().resize(width, height, { fit: 'fill' }).removeAlpha().raw().toBuffer();
}

async function child(variant: Variant, photo: Photo): Promise<ChildResult> {
  const bytes = fs.readFileSync(photo.file);
  const meta = await sharp(bytes).metadata();
  const mp = ((meta.width ?? 0) * (meta.height ?? 0)) / 1e6;
  const { warmup, runs } = runsFor(mp, variant);
  const times: number[] = [];
  let stages: Record<string, number> | undefined;
  const model = modelEntry(variant.endsWith('-int8') ? INT8_MODEL : FP32_MODEL);
  const time = async (fn: () => Promise<unknown> | unknown): Promise<void> => {
    for (let i = 0; i < warmup + runs; i++) {
      const t0 = performance.now();
      await fn();
      if (i >= warmup) times.push(performance.now() - t0);
    }
  };

  if (variant === 'ort-node') {
    const ort = (await import('onnxruntime-node')).default;
    const session = await ort.InferenceSession.create(model.path, { intraOpNumThreads: THREADS, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
    const rgb = await modelInputFor(photo.file);
    const { width, height, mean, std } = model.entry.input;
    const input = new Float32Array(3 * width * height);
    const plane = width * height;
    // Same normalisation as ours, done in JS outside the timed region: (a) times inference alone.
    for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) input[c * plane + i] = (rgb[i * 3 + c]! - mean[c]!) / std[c]!;
    const feeds = { [model.entry.input.name]: new ort.Tensor('float32', input, [1, 3, height, width]) };
    await time(() => session.run(feeds, [model.entry.output]));
  } else if (variant === 'addon' || variant === 'addon-int8') {
    const { loadBinding } = await import('../src/native/binding.js');
    const b = loadBinding();
    const { width, height, mean, std, name } = model.entry.input;
    const s = new b.Session(model.path, { threads: THREADS, inputName: name, outputName: model.entry.output, width, height, mean, std });
    const rgb = await modelInputFor(photo.file);
    // (b) includes our preprocessing into the input tensor; (a) does not include its JS loop.
    await time(() => s.infer(rgb, 3));
  } else if (variant === 'pipeline' || variant === 'pipeline-bilinear' || variant === 'pipeline-int8') {
    const { createRemovalPool } = await import('../src/pool/pool.js');
    const { DEFAULT_OPTIONS } = await import('../src/domain/removal.js');
    const pool = await createRemovalPool({ workers: 1, threadsPerWorker: THREADS, model: model.name });
    const refine = variant !== 'pipeline-bilinear';
    const all: Record<string, number>[] = [];
    await time(async () => {
      const r = await pool.run({ input: new Uint8Array(bytes), options: { ...DEFAULT_OPTIONS, size: 'full', format: 'png', refine, decontaminate: refine } });
      if (!r.ok) throw new Error(r.message);
      all.push(r.timings);
    });
    await pool.close();
    const measured = all.slice(warmup);
    stages = Object.fromEntries(Object.keys(measured[0] ?? {}).map((k) => [k, median(measured.map((m) => m[k]!))]));
  } else {
    const peer = await import('@imgly/background-removal-node');
    const dist = path.join(PACKAGE_ROOT, 'node_modules', '@imgly', 'background-removal-node', 'dist');
    const type = meta.format === 'png' ? 'image/png' : 'image/jpeg';
    await time(async () => {
      const blob = await peer.removeBackground(new Blob([bytes], { type }), {
        publicPath: `file://${dist}/`,
        model: 'medium',
        output: { format: 'image/png' },
      });
      await blob.arrayBuffer();
    });
  }
  return { variant, photo: photo.name, megapixels: mp, times, maxRssMb: process.resourceUsage().maxRSS / 1024, ...(stages ? { stages } : {}) };
}

async function parent(): Promise<void> {
  const named = process.argv
    .find((a) => a.startsWith('--photos='))
    ?.slice(9)
    .split(',');
  const photos = (await benchPhotos()).filter((p) => !named || named.includes(p.name));
  const only = process.argv
    .find((a) => a.startsWith('--only='))
    ?.slice(7)
    .split(',');
  const skipPeer = process.argv.includes('--no-peer');
  const self = fileURLToPath(import.meta.url);
  const results: ChildResult[] = [];
  for (const photo of photos) {
    for (const variant of VARIANTS) {
      if (only && !only.includes(variant)) continue;
      if (variant === 'peer' && skipPeer) continue;
      // Inference alone does not depend on the photo's size: measure it on the first photo only.
      if ((variant === 'ort-node' || variant.startsWith('addon')) && photo !== photos[0]) continue;
      process.stderr.write(`bench: ${variant} on ${photo.name}…\n`);
      try {
        // The pipeline variants run in the environment bin/cutout gives the service (launch-env.ts:
        // malloc's big blocks on huge pages), as the service runs: without it a 20 MP photo's decode at
        // output size faults 82 MB in 4 KiB pages and read ~2.5× its time in the service. The
        // libraries (onnxruntime-node, the addon's inference alone, the peer) run in node's plain
        // environment, as a user of them would, the addon beside onnxruntime-node in the same one.
        const env = variant.startsWith('pipeline') ? launchEnv() : process.env;
        const out = execFileSync(process.execPath, [self, '--child', variant, photo.name, photo.file], {
          encoding: 'utf8',
          maxBuffer: 1 << 24,
          stdio: ['ignore', 'pipe', 'inherit'],
          env,
        });
        results.push(JSON.parse(out.trim().split('\n').pop()!) as ChildResult);
      } catch (err) {
        process.stderr.write(`bench: ${variant} on ${photo.name} failed: ${(err as Error).message.split('\n')[0]}\n`);
      }
    }
  }
  const rows = results.map((r) => [
    r.variant,
    r.photo,
    r.megapixels.toFixed(1),
    r.times.length,
    (median(r.times) / 1000).toFixed(3),
    (quantile(r.times, 0.9) / 1000).toFixed(3),
    r.maxRssMb.toFixed(0),
    r.stages
      ? Object.entries(r.stages)
          .map(([k, v]) => `${k} ${Math.round(v)}`)
          .join(', ')
      : '',
  ]);
  const table = markdownTable(['variant', 'photo', 'MP', 'runs', 'median s', 'p90 s', 'peak RSS MB', 'pipeline stages (median ms)'], rows);
  console.log(table);
  const get = (v: Variant, p?: string) => results.find((r) => r.variant === v && (!p || r.photo === p));
  const ratios: string[] = [];
  const a = get('ort-node');
  const b = get('addon');
  if (a && b) ratios.push(`addon / ort-node inference: ${(median(b.times) / median(a.times)).toFixed(3)} (target ≤ 1)`);
  for (const photo of photos) {
    const c = get('pipeline', photo.name);
    const d = get('peer', photo.name);
    if (c && b) ratios.push(`${photo.name}: pipeline / addon inference: ${(median(c.times) / median(b.times)).toFixed(2)} (target ≤ 1.3 at 12 MP+)`);
    if (c && d) ratios.push(`${photo.name}: peer / pipeline: ${(median(d.times) / median(c.times)).toFixed(1)}× (target ≥ 10× at 12 MP+)`);
    const ci = get('pipeline-int8', photo.name);
    const bi = get('addon-int8');
    if (ci && bi)
      ratios.push(
        `${photo.name}: int8 model: pipeline / addon inference: ${(median(ci.times) / median(bi.times)).toFixed(2)}${d ? `, peer / pipeline ${(median(d.times) / median(ci.times)).toFixed(1)}×` : ''}`,
      );
    if (c?.stages && b) {
      const extra = (c.stages.composite ?? 0) - (get('pipeline-bilinear', photo.name)?.stages?.composite ?? 0);
      const ofInt8 = bi ? `, ${((100 * extra) / median(bi.times)).toFixed(1)}% of int8 inference` : '';
      ratios.push(
        `${photo.name}: refinement + decontamination cost: ${Math.round(extra)} ms = ${((100 * extra) / median(b.times)).toFixed(1)}% of inference${ofInt8} (target ≤ 15%)`,
      );
    }
  }
  console.log(`\n${ratios.join('\n')}`);
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'core.json'), JSON.stringify({ date: new Date().toISOString(), threads: THREADS, results, ratios }, null, 2));
  fs.writeFileSync(path.join(dir, 'core.md'), `${table}\n\n${ratios.join('\n')}\n`);
}

if (process.argv[2] === '--child') {
  const [variant, name, file] = process.argv.slice(3) as [Variant, string, string];
  child(variant, { name, file }).then(
    (r) => {
      console.log(JSON.stringify(r));
      process.exit(0);
    },
    (err: Error) => {
      console.error(err.stack);
      process.exit(1);
    },
  );
} else {
  await parent();
}
