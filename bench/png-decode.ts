// npm run bench:png -- --decode — a PNG upload decoded to RGBA at its own size, side by side in one run:
// the addon's decoder (native/src/png_decode.h, what decodePlainRgba now tries first) against
// libvips decoding straight into our memory (decodePlainRgba's path before it: measured on the same
// file with one private chunk added, which libvips ignores and the addon's decoder declines) and
// sharp's raw decode. Photos: the dev set's PNGs (read in place, never copied) and the 12 MP baseline
// photo as PNGs of ~1, 4 and 12 MP (sharp's default PNG settings, made in memory). Turns alternate per
// round; prints medians with lscpu's flags and writes bench/results/png-decode.json.
//   npm run bench:png -- --decode [--runs 15]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { loadBinding } from '../src/native/binding.js';
import { evalDir } from './quality/eval-dir.js';
import * as codec from '../src/worker/codec.js';
import { cpuFacts } from './cpu-facts.js';
import { benchPhotos } from './photos.js';
import { markdownTable, median } from '../test/harness/stats.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const binding = loadBinding();

/** `png` with a private ancillary chunk ("cuTt") after IHDR: libvips skips it, the addon's decoder declines it. */
function withPrivateChunk(png: Buffer): Buffer {
  const body = Buffer.from('cuTtbench', 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length - 4);
  return Buffer.concat([png.subarray(0, 33), len, body, crc, png.subarray(33)]);
}

async function photos(): Promise<Array<{ name: string; png: Buffer }>> {
  const out: Array<{ name: string; png: Buffer }> = [];
  const dir = path.join(evalDir(), 'images');
  if (fs.existsSync(dir))
    for (const f of fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.png'))
      .sort())
      out.push({ name: `dev ${f}`, png: fs.readFileSync(path.join(dir, f)) });
  const source = (await benchPhotos()).find((p) => p.name === 'elephants-12mp-baseline');
  if (source) {
    const { width, height } = await sharp(source.file).metadata();
    for (const mp of [1, 4, 12]) {
      const k = Math.min(1, Math.sqrt((mp * 1e6) / (width! * height!)));
      out.push({
        name: `elephants ${mp} MP`,
        png: await sharp(source.file)
          .resize(Math.round(width! * k), Math.round(height! * k))
          .png()
          .toBuffer(),
      });
    }
  }
  return out;
}

interface Row {
  photo: string;
  width: number;
  height: number;
  addonMs: number;
  libvipsMs: number;
  sharpMs: number;
}

const rows: Row[] = [];
for (const { name, png } of await photos()) {
  const input = new Uint8Array(png);
  const probe = await codec.probe(input);
  if (!probe.plainRgb) {
    console.error(`bench:png --decode: ${name} is not a plain RGB PNG, skipped`);
    continue;
  }
  const { width, height } = probe;
  const dst = new Uint8Array(width * height * 4);
  const declined = new Uint8Array(withPrivateChunk(png));
  if (!binding.decodePlainPng(input, width, height, dst)) throw new Error(`${name}: the addon's decoder declined it`);
  const ours = Buffer.from(dst);
  if (binding.decodePlainPng(declined, width, height, dst)) throw new Error(`${name}: the private chunk was not declined`);
  const variants: Array<[keyof Row, () => Promise<unknown> | unknown]> = [
    ['addonMs', () => binding.decodePlainPng(input, width, height, dst)],
    ['libvipsMs', () => binding.decodePlainRgba(declined, width, height, dst)],
    ['sharpMs', () => codec.decodeRgba(input, 5e8, width, height, true)],
  ];
  binding.decodePlainRgba(declined, width, height, dst);
  if (!Buffer.from(dst).equals(ours)) throw new Error(`${name}: libvips gave other bytes`);
  const times = variants.map(() => [] as number[]);
  for (let i = 0; i < runs + 2; i++)
    for (const [k, [, run]] of i % 2 ? [...variants.entries()].reverse() : [...variants.entries()]) {
      const t0 = performance.now();
      await run();
      if (i >= 2) times[k]!.push(performance.now() - t0);
    }
  rows.push({ photo: name, width, height, addonMs: median(times[0]!), libvipsMs: median(times[1]!), sharpMs: median(times[2]!) });
  console.error(`bench:png --decode: ${name} done`);
}

const cpu = cpuFacts();
const table = markdownTable(
  ['photo', 'size', 'addon ms', 'libvips into our memory ms', 'sharp ms', 'addon MP/s', 'addon vs libvips'],
  rows.map((r) => [
    r.photo,
    `${r.width}×${r.height}`,
    r.addonMs.toFixed(2),
    r.libvipsMs.toFixed(2),
    r.sharpMs.toFixed(2),
    ((r.width * r.height) / 1e3 / r.addonMs).toFixed(0),
    (r.addonMs / r.libvipsMs).toFixed(2),
  ]),
);
console.log(`${table}\n\n${runs} runs each, medians; ${cpu.model}, ${cpu.cores} cores: ${cpu.simd}; node ${process.version}, zlib ${process.versions.zlib}`);
const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, 'png-decode.json'), JSON.stringify({ date: new Date().toISOString(), cpu, runs, rows }, null, 2));
