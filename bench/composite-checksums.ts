// sha256 of compositeMask's output bytes over the dev photos (cached mattes) and a few synthetic
// shapes, for every switch combination: proves a native refactor changes no byte.
//   node dist/bench/composite-checksums.js [--addon path/to/cutout.node] > a.json   (then diff two runs)
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { loadBinding, type CompositeOptions, type NativeBinding } from '../src/native/binding.js';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { evalDir } from '../src/quality/eval-dir.js';
import { parseManifest } from '../src/quality/manifest.js';
import * as codec from '../src/worker/codec.js';
import { MatteCache } from './matte-cache.js';

const OPTIONS: Array<[string, CompositeOptions]> = [
  ['plain', { refine: false, matting: false, decontaminate: false }],
  ['refined', { refine: true, matting: false, decontaminate: false }],
  ['refined+decont', { refine: true, matting: false, decontaminate: true }],
  ['default', { refine: true, matting: true, decontaminate: true }],
  ['matting-no-decont', { refine: true, matting: true, decontaminate: false }],
];

function sha(b: Uint8Array): string {
  return crypto.createHash('sha256').update(b).digest('hex').slice(0, 16);
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--addon');
  const binding: NativeBinding = i > 0 ? (createRequire(import.meta.url)(path.resolve(process.argv[i + 1]!)) as NativeBinding) : loadBinding();
  const dir = evalDir(PACKAGE_ROOT);
  const rows = parseManifest(fs.readFileSync(path.join(dir, 'manifest.csv'), 'utf8'));
  const out: Record<string, string> = {};
  const run = (name: string, rgba: Uint8Array, w: number, h: number, mask: Float32Array, ms: number): void => {
    for (const [o, opts] of OPTIONS) {
      for (const threads of [1, 2]) {
        const px = rgba.slice();
        const box = binding.compositeMask(px, w, h, mask, ms, ms, { ...opts, threads });
        out[`${name} ${o} t${threads}`] = `${sha(px)} ${box.left},${box.top},${box.width},${box.height}`;
      }
    }
    const px = rgba.slice();
    binding.compositeMask(px, w, h, mask, ms, ms, { refine: true, decontaminate: true, roi: [Math.floor(w / 4), Math.floor(h / 5), w - 3, h - 7] });
    out[`${name} default roi`] = sha(px);
  };
  // The int8 model's mattes, from the on-disk cache or made once by this checkout's build (a fresh
  // checkout has none; without them every photo would be skipped and two builds compare as `{}`).
  const mattes = new MatteCache(loadBinding());
  for (const row of rows) {
    const bytes = fs.readFileSync(path.join(dir, row.imagePath));
    const mask = await mattes.matte({ model: 'isnet-int8', size: 1024, flip: false }, row.id, bytes);
    const raw = await codec.decodeRgba(bytes, 5e7, row.width, row.height, true);
    run(row.id, new Uint8Array(raw.data), raw.width, raw.height, mask, 1024);
    // Larger than the matte (grid = matte), and a small odd size (matte larger than the photo).
    if (row.id === 'am_GT04' || row.id.startsWith('davis_camel_00011')) {
      for (const [w, h] of [[2411, 1697], [131, 97]] as const) {
        const big = await codec.decodeRgba(bytes, 5e7, w, h, false);
        run(`${row.id}@${w}x${h}`, new Uint8Array(big.data), w, h, mask, 1024);
      }
    }
  }
  mattes.close();
  if (Object.keys(out).length === 0) throw new Error(`no photos in ${dir}`);
  process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
