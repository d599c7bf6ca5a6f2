// The decode estimate is an upper bound: each bomb kind decoded alone in a process holds no more than decodeCost says.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
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
