// Speed cost of the memory levers (docs/memory.md): inference time and minor page faults per run on
// the 1024² input of a real photo, with and without each lever, side by side in one run. Every
// variant runs in its own child process (the malloc settings are process-wide); the children take
// turns, ROUNDS times, each doing 2 warm-up runs and RUNS timed ones, so background load falls on all
// variants alike. "Released after every run" hands the block cache (ONNX Runtime's tensors) and
// malloc's free pages back after each run, as the pools did after every task before they kept their
// memory while busy (src/pool/idle-release.ts).
//
//   node dist/bench/memory-speed.js [--model NAME] [--rounds 3] [--runs 4]

import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadBinding, sessionOptionsFor } from '../src/native/binding.js';
import { modelEntry } from '../src/model/manifest.js';
import { markdownTable, median } from './stats.js';
import { cpuInfo } from './soak-driver.js';

interface Variant {
  name: string;
  env?: Record<string, string>;
  options?: { memoryPattern?: boolean };
  /** Hand the block cache and malloc's free pages back after every run. */
  releaseEachRun?: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'shipped (block cache kept, pattern off, mmap threshold 32 MiB)' },
  { name: 'released after every run', releaseEachRun: true },
  { name: 'released after every run, glibc.malloc.hugetlb=1', releaseEachRun: true, env: { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' } },
  { name: 'with memory pattern', options: { memoryPattern: true } },
  { name: "glibc's default thresholds (CUTOUT_MALLOC_TUNING=off)", env: { CUTOUT_MALLOC_TUNING: 'off' } },
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
  const release = () => {
    if (!variant.releaseEachRun) return;
    b.releaseScratch();
    b.trimMemory();
  };
  release();
  const times: number[] = [];
  const faults: number[] = [];
  for (let i = 0; i < Number(process.env.BENCH_RUNS); i++) {
    const f0 = process.resourceUsage().minorPageFault;
    const t0 = performance.now();
    session.infer(rgb, 3);
    times.push(performance.now() - t0);
    faults.push(process.resourceUsage().minorPageFault - f0);
    release();
  }
  process.stdout.write(JSON.stringify({ times, faults, rssMb: process.memoryUsage.rss() / 2 ** 20 }));
}

function main(): void {
  const rounds = Number(flag('rounds', '3'));
  const runs = flag('runs', '4');
  const model = flag('model', '');
  const times = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
  const faults = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const v of VARIANTS) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], {
        env: { ...process.env, ...v.env, BENCH_VARIANT: JSON.stringify(v), BENCH_RUNS: runs, BENCH_MODEL: model },
      });
      const got = JSON.parse(out.toString()) as { times: number[]; faults: number[] };
      times.get(v.name)!.push(...got.times);
      faults.get(v.name)!.push(...got.faults);
    }
  }
  const base = median(times.get(VARIANTS[0]!.name)!);
  const cpu = cpuInfo();
  console.log(`model ${model || modelEntry().name}, ${cpu.model}, ${os.availableParallelism()} threads, flags ${cpu.flags.join(' ')}; ${rounds}×${runs} runs each`);
  console.log(
    markdownTable(
      ['variant', 'median ms', 'min ms', 'vs shipped', 'minor faults per run (median)'],
      VARIANTS.map((v) => {
        const t = times.get(v.name)!;
        const m = median(t);
        return [v.name, m.toFixed(0), Math.min(...t).toFixed(0), `${m >= base ? '+' : ''}${(((m - base) / base) * 100).toFixed(1)}%`, median(faults.get(v.name)!).toFixed(0)];
      }),
    ),
  );
}

if (process.argv.includes('--child')) await child();
else main();
