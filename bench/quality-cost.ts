// Time per photo of each quality level: `npm run bench:quality -- --cost [--runs N]`.
// One remover (1 worker, every core its threads), the levels interleaved run by run so that a
// shared machine's load falls on all of them alike; medians after two warm-up rounds. Prints a
// table and writes bench/results/quality-cost.json. Record `lscpu` flags with the figures.
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createRemover } from '../src/lib/remove.js';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { QUALITY_LEVELS, type QualityLevel } from '../src/domain/removal.js';
import { evalDir } from './quality/eval-dir.js';
import { median } from '../test/harness/stats.js';
import { cpuFacts } from './cpu-facts.js';

async function photos(): Promise<Array<{ name: string; bytes: Buffer }>> {
  const src = path.join(evalDir(PACKAGE_ROOT), 'images', 'am_GT04.png');
  const small = await sharp(src).jpeg({ quality: 92 }).toBuffer();
  // 12 MP: the doll photo upscaled (what matters here is the pixel count the stages see).
  const big = await sharp(src).resize(4000, 3000, { fit: 'fill' }).jpeg({ quality: 92 }).toBuffer();
  return [
    { name: '0.45 MP JPEG', bytes: small },
    { name: '12 MP JPEG', bytes: big },
  ];
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--runs');
  const runs = i > 0 ? Number(process.argv[i + 1]) : 5;
  const remover = await createRemover({ workers: 1 });
  const rows: Array<{ photo: string; level: QualityLevel; ms: number[] }> = [];
  try {
    for (const p of await photos()) {
      const ms = new Map<QualityLevel, number[]>(QUALITY_LEVELS.map((l) => [l, []]));
      for (let r = -2; r < runs; r++) {
        for (const level of QUALITY_LEVELS) {
          const t0 = performance.now();
          await remover.remove(p.bytes, { size: 'full', format: 'png', quality: level });
          if (r >= 0) ms.get(level)!.push(performance.now() - t0);
        }
      }
      for (const level of QUALITY_LEVELS) rows.push({ photo: p.name, level, ms: ms.get(level)! });
    }
  } finally {
    await remover.close();
  }
  const flags = cpuFacts().simd;
  const lines = [
    `CPU: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'} (${flags}); load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    '',
    '| photo | level | median ms | × balanced |',
    '|---|---|---:|---:|',
  ];
  for (const r of rows) {
    const base = median(rows.find((b) => b.photo === r.photo && b.level === 'balanced')!.ms);
    lines.push(`| ${r.photo} | ${r.level} | ${median(r.ms).toFixed(0)} | ${(median(r.ms) / base).toFixed(2)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  const out = path.join(PACKAGE_ROOT, 'bench', 'results');
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'quality-cost.json'), JSON.stringify({ date: new Date().toISOString(), flags, loadavg: os.loadavg(), rows }, null, 1));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
