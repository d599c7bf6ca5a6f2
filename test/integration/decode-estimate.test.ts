// The decode estimate is an upper bound: each bomb kind decoded alone in a process holds no more than decodeCost says.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import t from 'tap';
import * as codec from '../../src/worker/codec.js';
import { BOMBS } from '../helpers/bombs.js';
import type { StageReport } from '../helpers/decode-stage-child.js';

const CHILD = fileURLToPath(new URL('../helpers/decode-stage-child.js', import.meta.url));

// One stage per kind, the costly one (docs/memory.md, "Decoding", has them all).
const CASES: Record<string, string[]> = {
  '1-bit greyscale PNG (14 KB)': ['out-full'],
  '1-bit palette PNG, interlaced (26 KB)': ['model', 'out-preview'],
  'progressive JPEG (300 KB)': ['model', 'out-full'],
  'lossless WebP (2 KB)': ['out-full'],
  '8-bit RGBA PNG, interlaced, 7071x7071 (220 KB)': ['out-preview'],
};

t.test('measured peak <= estimate', async (t) => {
  const dir = t.testdir();
  for (const bomb of BOMBS) {
    const stages = CASES[bomb.name];
    if (!stages) continue;
    const file = join(dir, 'bomb');
    writeFileSync(file, await bomb.make());
    for (const stage of stages) {
      const { stdout } = await promisify(execFile)(process.execPath, [CHILD, file, stage]);
      const r = JSON.parse(stdout) as StageReport;
      t.ok(r.peakMb <= r.estimateMb, `${bomb.name}, ${stage}: held ${r.peakMb} MB, estimated ${r.estimateMb} MB`);
    }
  }
});

t.test('the model input resized in memory: measured peak <= estimate', async (t) => {
  // 5000x1000, 15 MB of RGB: the model enlarges its height, so the photo is decoded whole at its own
  // size and resized by the addon (codec.resizesModelInputInMemory); the estimate must cover that.
  const file = join(t.testdir(), 'panorama.jpg');
  const bytes = await sharp({
    create: { width: 5000, height: 1000, channels: 3, background: '#808080', noise: { type: 'gaussian' as const, mean: 128, sigma: 40 } },
  })
    .jpeg({ quality: 90 })
    .toBuffer();
  writeFileSync(file, bytes);
  t.ok(codec.resizesModelInputInMemory(await codec.probe(bytes), 1024, 1024), 'the in-memory path');
  const { stdout } = await promisify(execFile)(process.execPath, [CHILD, file, 'model']);
  const r = JSON.parse(stdout) as StageReport;
  t.ok(r.peakMb <= r.estimateMb, `held ${r.peakMb} MB, estimated ${r.estimateMb} MB`);
  t.ok(r.estimateMb >= 15, 'the estimate counts the whole photo');
});
