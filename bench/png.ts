// npm run bench:png — PNG encoding of real cut-outs at ~1, ~4 and ~12 MP, side by side in one run:
// sharp (libpng + zlib-ng, no filtering) at levels 1, 4 (what codec.ts used before) and 6 against the
// addon's encoder (native/src/png_encode.h) with 'rle' (level 4, Z_RLE), zlib's default strategy at
// level 4 and 'fast' (png_fast.h), each on 1 and 2 threads. Variants take turns within each round, so
// background load hits them alike; the minimum shows what 2 threads give when the host lends both
// cores at once (on a shared VM it often does not). Then the 43 dev cut-outs (eval photo + its ground
// truth alpha, colour zeroed where transparent; read in place, never copied): total bytes and time per
// variant. Prints median tables and writes bench/results/png.json (with `lscpu`'s flags).
// `--base A.node`: another build of the addon (its libonnxruntime.so.1 beside it) encodes 'fast' in the
// same turns, as "base fast t1/t2", for a before-and-after in one run.
// `--decode [--runs 15]`: the decoding side instead (bench/png-decode.ts).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { createRemover } from '../src/lib/remove.js';
import { loadBinding, type PngEncodeOptions } from '../src/native/binding.js';
import { evalDir } from './quality/eval-dir.js';
import { benchPhotos } from './photos.js';
import { markdownTable, median, quantile } from '../test/harness/stats.js';

sharp.concurrency(1); // as in worker/codec.ts
sharp.cache(false);

const TARGETS_MP = [1, 4, 12];
const PHOTO = 'elephants-12mp-baseline';

interface Image {
  name: string;
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 4;
}

const sharpPng =
  (level: number): Encode =>
  async (img) => {
    let s = sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } });
    if (img.channels === 1) s = s.toColourspace('b-w');
    return s.png({ compressionLevel: level, adaptiveFiltering: false }).toBuffer();
  };

type Encode = (img: Image) => Promise<Uint8Array> | Uint8Array;

const binding = loadBinding();
const native =
  (options: Omit<PngEncodeOptions, 'threads'>, threads: number): Encode =>
  (img) =>
    binding.encodePng(img.data, img.width, img.height, img.channels, { ...options, threads });

const BEFORE = 'sharp L4 none (before)';
const RLE = 'native rle t1';
const VARIANTS: Array<[string, Encode]> = [
  [BEFORE, sharpPng(4)],
  ['sharp L1 none', sharpPng(1)],
  ['sharp L6 none', sharpPng(6)],
  [RLE, native({ level: 4, strategy: 'rle' }, 1)],
  ['native rle t2', native({ level: 4, strategy: 'rle' }, 2)],
  ['native L4 t1', native({ level: 4, strategy: 'default' }, 1)],
  ['native L4 t2', native({ level: 4, strategy: 'default' }, 2)],
  ['native fast t1', native({ level: 4, strategy: 'fast' }, 1)],
  ['native fast t2', native({ level: 4, strategy: 'fast' }, 2)],
];
const { values: args } = parseArgs({ options: { base: { type: 'string' }, decode: { type: 'boolean' }, runs: { type: 'string' } } });
if (args.base) {
  const base = createRequire(import.meta.url)(path.resolve(args.base)) as Pick<typeof binding, 'encodePng'>;
  const fast =
    (threads: number): Encode =>
    (img) =>
      base.encodePng(img.data, img.width, img.height, img.channels, { level: 4, strategy: 'fast', threads });
  VARIANTS.push(['base fast t1', fast(1)], ['base fast t2', fast(2)]);
}

/** Real cut-outs: the photo resized to each target size, then through the whole pipeline. */
async function cutouts(): Promise<Image[]> {
  const photos = await benchPhotos();
  const photo = photos.find((p) => p.name === PHOTO) ?? photos.at(-1);
  if (!photo) throw new Error('bench:png: no photo available (bench/photos.ts)');
  const meta = await sharp(photo.file).metadata();
  const aspect = meta.width! / meta.height!;
  const remover = await createRemover({ workers: 1 });
  const out: Image[] = [];
  try {
    for (const mp of TARGETS_MP) {
      const width = Math.round(Math.sqrt(mp * 1e6 * aspect));
      const height = Math.round(width / aspect);
      const input = await sharp(photo.file).resize(width, height, { fit: 'fill' }).jpeg({ quality: 92 }).toBuffer();
      const res = await remover.remove(input, { size: 'full', format: 'png' });
      const { data, info } = await sharp(res.data).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      // The pipeline zeroes the colour of transparent pixels; make sure of it after the round trip.
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] === 0) data.fill(0, i, i + 3);
      const name = `${photo.name} → ${((info.width * info.height) / 1e6).toFixed(1)} MP`;
      out.push({ name: `${name} RGBA`, data, width: info.width, height: info.height, channels: 4 });
      if (mp === 12) {
        const alpha = Buffer.alloc(info.width * info.height);
        for (let i = 0; i < alpha.length; i++) alpha[i] = data[4 * i + 3]!;
        out.push({ name: `${name} alpha`, data: alpha, width: info.width, height: info.height, channels: 1 });
      }
    }
  } finally {
    await remover.close();
  }
  return out;
}

/** The dev cut-outs: each eval photo with its ground-truth alpha, colour zeroed where alpha is 0. */
async function devCutouts(): Promise<Image[]> {
  const dir = evalDir();
  const manifest = path.join(dir, 'manifest.csv');
  if (!fs.existsSync(manifest)) return [];
  const out: Image[] = [];
  for (const line of fs.readFileSync(manifest, 'utf8').trim().split('\n').slice(1)) {
    const [id, image, gt] = line.split(',');
    const rgb = await sharp(path.join(dir, image!)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const alpha = await sharp(path.join(dir, gt!)).extractChannel(0).raw().toBuffer();
    const { width, height } = rgb.info;
    const data = Buffer.alloc(width * height * 4);
    for (let i = 0; i < width * height; i++) {
      if (alpha[i]) rgb.data.copy(data, 4 * i, 3 * i, 3 * i + 3);
      data[4 * i + 3] = alpha[i]!;
    }
    out.push({ name: id!, data, width, height, channels: 4 });
  }
  return out;
}

function cpuFlags(): string[] {
  const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
  const flags =
    cpuinfo
      .match(/^flags\s*:(.*)$/m)?.[1]
      ?.trim()
      .split(/\s+/) ?? [];
  return flags.filter((f) => f === 'avx2' || f.startsWith('avx512')).sort();
}

/** `lscpu`'s Flags line, as the docs quote it (empty where lscpu is missing). */
function lscpuFlags(): string {
  try {
    return (
      execFileSync('lscpu', { encoding: 'utf8' })
        .match(/^Flags:\s*(.*)$/m)?.[1]
        ?.trim() ?? ''
    );
  } catch {
    return '';
  }
}

/** Every variant `warmup + runs` times on `img`, taking turns: the timed runs and the bytes, per variant. */
async function measure(img: Image, warmup: number, runs: number): Promise<Array<{ times: number[]; bytes: number }>> {
  const out = VARIANTS.map(() => ({ times: [] as number[], bytes: 0 }));
  for (let round = 0; round < warmup + runs; round++) {
    for (const [k, [, encode]] of VARIANTS.entries()) {
      const t0 = performance.now();
      const png = await encode(img);
      const ms = performance.now() - t0;
      if (round >= warmup) out[k]!.times.push(ms);
      out[k]!.bytes = png.byteLength;
    }
  }
  return out;
}

async function main(): Promise<void> {
  const images = await cutouts();
  const rows: Array<{ image: string; variant: string; megapixels: number; medianMs: number; p90Ms: number; minMs: number; mpPerS: number; bytes: number }> = [];
  for (const img of images) {
    const mp = (img.width * img.height) / 1e6;
    const [warmup, runs] = mp > 8 ? [2, 11] : [3, 21];
    const results = await measure(img, warmup, runs);
    for (const [k, [variant]] of VARIANTS.entries()) {
      const { times, bytes } = results[k]!;
      const medianMs = median(times);
      rows.push({
        image: img.name,
        variant,
        megapixels: mp,
        medianMs,
        p90Ms: quantile(times, 0.9),
        minMs: Math.min(...times),
        mpPerS: mp / (medianMs / 1000),
        bytes,
      });
    }
    console.error(`bench:png: ${img.name} done`);
  }

  const pct = (a: number, b: number) => `${((100 * a) / b - 100).toFixed(1)}%`;
  const table = markdownTable(
    ['image', 'encoder', 'median ms', 'p90 ms', 'min ms', 'MP/s (median)', 'bytes', 'vs before', 'vs rle t1'],
    rows.map((r) => {
      const before = rows.find((b) => b.image === r.image && b.variant === BEFORE)!;
      const rle = rows.find((b) => b.image === r.image && b.variant === RLE)!;
      return [
        r.image,
        r.variant,
        r.medianMs.toFixed(1),
        r.p90Ms.toFixed(1),
        r.minMs.toFixed(1),
        r.mpPerS.toFixed(0),
        r.bytes.toLocaleString('en-US'),
        pct(r.bytes, before.bytes),
        pct(r.bytes, rle.bytes),
      ];
    }),
  );

  // The dev cut-outs (~0.45 MP each): 3 rounds per photo, the medians summed.
  const dev = await devCutouts();
  const devRows = VARIANTS.map(([variant]) => ({ variant, photos: dev.length, ms: 0, bytes: 0, worstVsRle: 0, worstPhoto: '' }));
  for (const img of dev) {
    const results = await measure(img, 1, 3);
    const rleBytes = results[VARIANTS.findIndex(([v]) => v === RLE)]!.bytes;
    for (const [k, r] of results.entries()) {
      const row = devRows[k]!;
      row.ms += median(r.times);
      row.bytes += r.bytes;
      if (r.bytes / rleBytes > row.worstVsRle) [row.worstVsRle, row.worstPhoto] = [r.bytes / rleBytes, img.name];
    }
  }
  const rleDev = devRows.find((r) => r.variant === RLE)!;
  const devTable = dev.length
    ? markdownTable(
        ['encoder', `ms (all ${dev.length})`, 'bytes (all)', 'vs rle t1', 'worst photo vs rle t1'],
        devRows.map((r) => [
          r.variant,
          r.ms.toFixed(1),
          r.bytes.toLocaleString('en-US'),
          pct(r.bytes, rleDev.bytes),
          `${r.worstPhoto} ${(r.worstVsRle).toFixed(3)}x`,
        ]),
      )
    : `(no dev cut-outs: ${evalDir()} not found)`;

  const env = {
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    flags: cpuFlags(),
    lscpuFlags: lscpuFlags(),
    loadavg: os.loadavg(),
    node: process.version,
    zlib: process.versions.zlib,
    zlibNg: sharp.versions['zlib-ng'],
    sharp: sharp.versions.sharp,
  };
  console.log(`${table}\n\n${devTable}\n\n${JSON.stringify(env)}`);
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'png.json'), JSON.stringify({ date: new Date().toISOString(), env, rows, dev: devRows }, null, 2));
}

if (args.decode) {
  // png-decode.ts reads its own flags, and --decode is not one of them.
  process.argv.splice(process.argv.indexOf('--decode'), 1);
  await import('./png-decode.js');
} else await main();
