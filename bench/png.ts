// npm run bench:png — PNG encoding of real cut-outs at ~1, ~4 and ~12 MP, side by side in one run:
// sharp with the settings codec.ts used before (level 4, no filtering) against the addon's encoder
// (native/src/png_encode.h) with the codec's settings (level 4, RLE) and zlib's default strategy at
// level 4, each on 1 and 2 threads. Variants take turns within each round, so background load hits
// them alike; the minimum shows what 2 threads give when the host lends both cores at once (on a
// shared VM it often does not). Prints a median table and writes bench/results/png.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { createRemover } from '../src/lib/remove.js';
import { loadBinding, type PngEncodeOptions } from '../src/native/binding.js';
import { benchPhotos } from './photos.js';
import { markdownTable, median, quantile } from './stats.js';

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

type Encode = (img: Image) => Promise<Uint8Array> | Uint8Array;

const binding = loadBinding();
const native = (options: Omit<PngEncodeOptions, 'threads'>, threads: number): Encode => (img) =>
  binding.encodePng(img.data, img.width, img.height, img.channels, { ...options, threads });

const VARIANTS: Array<[string, Encode]> = [
  [
    'sharp L4 none (before)',
    async (img) => {
      let s = sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } });
      if (img.channels === 1) s = s.toColourspace('b-w');
      return s.png({ compressionLevel: 4, adaptiveFiltering: false }).toBuffer();
    },
  ],
  ['native rle t1 (codec)', native({ level: 4, strategy: 'rle' }, 1)],
  ['native rle t2', native({ level: 4, strategy: 'rle' }, 2)],
  ['native L4 t1', native({ level: 4, strategy: 'default' }, 1)],
  ['native L4 t2', native({ level: 4, strategy: 'default' }, 2)],
];

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
      const name = `${photo.name} → ${(info.width * info.height / 1e6).toFixed(1)} MP`;
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

function cpuFlags(): string[] {
  const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
  const flags = cpuinfo.match(/^flags\s*:(.*)$/m)?.[1]?.trim().split(/\s+/) ?? [];
  return flags.filter((f) => f === 'avx2' || f === 'avx512_vnni').sort();
}

async function main(): Promise<void> {
  const images = await cutouts();
  const rows: Array<{ image: string; variant: string; medianMs: number; p90Ms: number; minMs: number; bytes: number }> = [];
  for (const img of images) {
    const mp = (img.width * img.height) / 1e6;
    const [warmup, runs] = mp > 8 ? [2, 11] : [3, 21];
    const times = VARIANTS.map(() => [] as number[]);
    const bytes = VARIANTS.map(() => 0);
    for (let round = 0; round < warmup + runs; round++) {
      for (const [k, [, encode]] of VARIANTS.entries()) {
        const t0 = performance.now();
        const png = await encode(img);
        const ms = performance.now() - t0;
        if (round >= warmup) times[k]!.push(ms);
        bytes[k] = png.byteLength;
      }
    }
    for (const [k, [variant]] of VARIANTS.entries()) {
      rows.push({ image: img.name, variant, medianMs: median(times[k]!), p90Ms: quantile(times[k]!, 0.9), minMs: Math.min(...times[k]!), bytes: bytes[k]! });
    }
    console.error(`bench:png: ${img.name} done`);
  }

  const table = markdownTable(
    ['image', 'encoder', 'median ms', 'p90 ms', 'min ms', 'bytes', 'size vs before'],
    rows.map((r) => {
      const before = rows.find((b) => b.image === r.image)!;
      return [r.image, r.variant, r.medianMs.toFixed(1), r.p90Ms.toFixed(1), r.minMs.toFixed(1), r.bytes.toLocaleString('en-US'), `${((100 * r.bytes) / before.bytes - 100).toFixed(1)}%`];
    }),
  );
  const env = { cpu: os.cpus()[0]?.model, cores: os.cpus().length, flags: cpuFlags(), loadavg: os.loadavg(), node: process.version, zlib: process.versions.zlib, zlibNg: sharp.versions['zlib-ng'], sharp: sharp.versions.sharp };
  console.log(`${table}\n\n${JSON.stringify(env)}`);
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'png.json'), JSON.stringify({ date: new Date().toISOString(), env, rows }, null, 2));
}

await main();
