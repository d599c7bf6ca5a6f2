// Speed cost of the memory levers (docs/memory.md): inference time on the 1024² input of a real
// photo, with and without each lever, side by side in one run. Every variant runs in its own child
// process (the malloc settings are process-wide); the children take turns, ROUNDS times, each doing
// 2 warm-up runs and RUNS timed ones, so background load falls on all variants alike.
//
//   node dist/bench/memory-speed.js [--model NAME] [--rounds 3] [--runs 4]

import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadBinding, sessionOptionsFor } from '../src/native/binding.js';
import { modelEntry } from '../src/model/manifest.js';
import { markdownTable, median } from './stats.js';

interface Variant {
  name: string;
  env?: Record<string, string>;
  options?: { memoryPattern?: boolean; arenaShrink?: boolean };
}

const VARIANTS: Variant[] = [
  { name: 'shipped (pattern off, arena shrink, mmap threshold 64 KiB)' },
  { name: 'without arena shrink', options: { arenaShrink: false } },
  { name: 'with memory pattern', options: { memoryPattern: true } },
  { name: 'glibc default mmap threshold (CUTOUT_MALLOC_TUNING=off)', env: { CUTOUT_MALLOC_TUNING: 'off' } },
  { name: 'ORT defaults (pattern on, no shrink, glibc default)', env: { CUTOUT_MALLOC_TUNING: 'off' }, options: { memoryPattern: true, arenaShrink: false } },
  { name: 'shipped + MALLOC_ARENA_MAX=1', env: { MALLOC_ARENA_MAX: '1' } },
];

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}

async function child(): Promise<void> {
  const sharp = (await import('sharp')).default;
  const { evalImage } = await import('../test/helpers/core-fixtures.js');
  const model = modelEntry(process.env.BENCH_MODEL || undefined);
  const variant = JSON.parse(process.env.BENCH_VARIANT!) as Variant;
  const b = loadBinding();
  const { width, height } = model.entry.input;
  const session = new b.Session(model.path, { ...sessionOptionsFor(model.entry, os.availableParallelism()), ...variant.options });
  const rgb = await sharp(evalImage('am_GT04')).resize(width, height, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  for (let i = 0; i < 2; i++) session.infer(rgb, 3);
  const times: number[] = [];
  for (let i = 0; i < Number(process.env.BENCH_RUNS); i++) {
    const t0 = performance.now();
    session.infer(rgb, 3);
    times.push(performance.now() - t0);
  }
  process.stdout.write(JSON.stringify(times));
}

function main(): void {
  const rounds = Number(flag('rounds', '3'));
  const runs = flag('runs', '4');
  const model = flag('model', '');
  const times = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const v of VARIANTS) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], {
        env: { ...process.env, ...v.env, BENCH_VARIANT: JSON.stringify(v), BENCH_RUNS: runs, BENCH_MODEL: model },
      });
      times.get(v.name)!.push(...(JSON.parse(out.toString()) as number[]));
    }
  }
  const base = median(times.get(VARIANTS[0]!.name)!);
  console.log(`model ${model || modelEntry().name}, ${os.cpus()[0]?.model ?? 'cpu'}, ${os.availableParallelism()} threads, ${rounds}×${runs} runs each`);
  console.log(
    markdownTable(
      ['variant', 'median ms', 'min ms', 'vs shipped'],
      VARIANTS.map((v) => {
        const t = times.get(v.name)!;
        const m = median(t);
        return [v.name, m.toFixed(0), Math.min(...t).toFixed(0), `${m >= base ? '+' : ''}${(((m - base) / base) * 100).toFixed(1)}%`];
      }),
    ),
  );
}

if (process.argv.includes('--child')) await child();
else main();
