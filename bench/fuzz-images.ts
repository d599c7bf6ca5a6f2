// bench:faults --faults fuzz-images: corrupted real photos through the library (one real pool), for a while. Each
// removal must give an image whose header says the size the result reports, or a RemoveError with a
// code other than internal_error; never another exception, never a hang (60 s). The photos are the
// eval/dev photos read in place (../shared/eval/dev), shrunk to 320 px and encoded as baseline and
// progressive JPEG, PNG, interlaced PNG and WebP, then cut, holed, or with bytes (also in the headers)
// overwritten, by a seeded generator. Prints the outcomes, writes bench/results/fuzz-images.json,
// exits 1 on a failure (the failing inputs are kept in bench/results/fuzz-images/).
//
//   npm run bench:faults -- --faults fuzz-images [--seconds 120] [--seed 1]

import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { evalDir } from './quality/eval-dir.js';
import { createRemover, RemoveError } from '../src/index.js';
import { SIZE_TIERS } from '../src/domain/removal.js';
import { cpuFacts } from './cpu-facts.js';
import { Rng } from '../test/harness/fuzz-requests.js';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const seconds = Number(flag('seconds', '120'));
const seed = Number(flag('seed', '1'));
const HANG_MS = 60_000;

async function seedImages(): Promise<Buffer[]> {
  const dir = path.join(evalDir(), 'images');
  const out: Buffer[] = [];
  for (const file of fs.readdirSync(dir).sort().slice(0, 12)) {
    const small = sharp(path.join(dir, file)).resize(320, 320, { fit: 'inside' });
    out.push(
      await small.clone().jpeg({ quality: 85 }).toBuffer(),
      await small.clone().jpeg({ progressive: true }).toBuffer(),
      await small.clone().png().toBuffer(),
      await small.clone().png({ progressive: true }).toBuffer(),
      await small.clone().webp().toBuffer(),
    );
  }
  return out;
}

function corrupt(rng: Rng, original: Buffer): Buffer {
  const b = Buffer.from(original);
  switch (rng.int(5)) {
    case 0: // a few bytes anywhere
      for (let i = rng.int(8); i >= 0; i--) b[rng.int(b.length)] = rng.int(256);
      return b;
    case 1: // one byte among the first 72 (signatures, IHDR, SOF, VP8 headers)
      b[8 + rng.int(Math.min(64, b.length - 8))] = rng.int(256);
      return b;
    case 2: // cut short
      return b.subarray(0, rng.int(b.length));
    case 3: {
      // a hole
      const at = rng.int(b.length);
      return Buffer.concat([b.subarray(0, at), b.subarray(at + rng.int(200))]);
    }
    default: // 32-bit lengths or sizes overwritten with huge or random values
      for (let i = 0; i < 4; i++) b.writeUInt32BE(rng.chance(0.5) ? 0xffffffff : rng.int(70_000), rng.int(b.length - 4));
      return b;
  }
}

const rng = new Rng(seed);
const seeds = await seedImages();
const remover = await createRemover({ workers: 1 });
const outcomes: Record<string, number> = {};
const failures: Array<{ what: string; file: string }> = [];
const failDir = path.join(PACKAGE_ROOT, 'bench', 'results', 'fuzz-images');
let sent = 0;
let slowestMs = 0;
const deadline = performance.now() + seconds * 1000;
console.log(`bench:faults --faults fuzz-images: ${seeds.length} encoded photos, corrupted, for ${seconds} s, seed ${seed}`);

while (performance.now() < deadline) {
  const input = corrupt(rng, rng.pick(seeds));
  const size = rng.pick(SIZE_TIERS.slice(0, 4)); // 50MP only changes the cap
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<'hang'>((resolve) => (timer = setTimeout(() => resolve('hang'), HANG_MS)));
  let problem: string | null = null;
  try {
    const out = await Promise.race([remover.remove(input, { size }), hang]);
    if (out === 'hang') problem = `no result after ${HANG_MS} ms`;
    else {
      const meta = await sharp(out.data).metadata();
      if (meta.width !== out.width || meta.height !== out.height) problem = `result says ${out.width}×${out.height}, its header ${meta.width}×${meta.height}`;
      else outcomes.ok = (outcomes.ok ?? 0) + 1;
    }
  } catch (err) {
    if (err instanceof RemoveError && err.code !== 'internal_error') outcomes[err.code] = (outcomes[err.code] ?? 0) + 1;
    else problem = `${err instanceof RemoveError ? 'internal_error' : 'an exception'}: ${String(err).slice(0, 200)}`;
  }
  clearTimeout(timer);
  slowestMs = Math.max(slowestMs, performance.now() - t0);
  sent++;
  if (problem) {
    fs.mkdirSync(failDir, { recursive: true });
    const file = path.join(failDir, `seed${seed}-${sent}.bin`);
    fs.writeFileSync(file, input);
    failures.push({ what: `${problem} (size ${size})`, file });
    if (problem.startsWith('no result')) break; // the pool is stuck: nothing after this is meaningful
  }
}
await remover.close();

const cpu = cpuFacts();
console.log(
  `sent ${sent}; outcomes ${Object.entries(outcomes)
    .map(([k, n]) => `${k}:${n}`)
    .join(' ')}; slowest ${Math.round(slowestMs)} ms`,
);
for (const f of failures.slice(0, 10)) console.log(`FAIL ${f.what}: ${f.file}`);
console.log(`${failures.length} failed checks`);
const out = path.join(PACKAGE_ROOT, 'bench', 'results');
fs.mkdirSync(out, { recursive: true });
const report = {
  date: new Date().toISOString(),
  cpu: { model: cpu.model, cores: cpu.cores, simd: cpu.simd },
  seconds,
  seed,
  sent,
  outcomes,
  slowestMs: Math.round(slowestMs),
  failures,
};
fs.writeFileSync(path.join(out, 'fuzz-images.json'), `${JSON.stringify(report, null, 1)}\n`);
process.exitCode = failures.length > 0 ? 1 : 0;
