// The machine a benchmark ran on, from lscpu: machines differ between runs (AVX-512 VNNI or AVX2
// only), so every result records them and figures are compared only within one run.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface CpuFacts {
  model: string;
  cores: number;
  /** Every lscpu flag. */
  flags: string;
  /** The flags that decide our kernels' speed (avx*, vnni, fma, f16c, amx). */
  simd: string;
}

export function cpuFacts(): CpuFacts {
  let model = os.cpus()[0]?.model ?? 'unknown';
  let flags = '';
  try {
    const text = execFileSync('lscpu', { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
    const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
    model = field('Model name') || model;
    flags = field('Flags');
  } catch {
    model = `${model} (no lscpu)`;
  }
  const simd = flags
    .split(/\s+/)
    .filter((f) => /avx|vnni|fma|f16c|amx/.test(f))
    .join(' ');
  return { model, cores: os.availableParallelism(), flags, simd };
}
