// Ledger micro-benchmark: reserve+settle pairs, authenticate, balances and one full request's ledger path
// (rate + slot + reserve + settle + release). Prints median/p90/p99 in µs and writes bench/results/ledger.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLmdbLedger } from '../src/ledger/lmdb-ledger.js';
import type { Durability } from '../src/ledger/db.js';

const N = Number(process.env.LEDGER_BENCH_N ?? 5000);
const WARMUP = Math.min(1000, N);
const durability = (process.env.LEDGER_BENCH_DURABILITY ?? 'relaxed') as Durability;

interface Stats {
  n: number;
  medianUs: number;
  p90Us: number;
  p99Us: number;
}

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => Math.round((s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0) * 10) / 10;
  return { n: s.length, medianUs: at(0.5), p90Us: at(0.9), p99Us: at(0.99) };
}

async function time(n: number, fn: () => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'cutout-ledger-bench-'));
const ledger = openLmdbLedger(dir, { durability });
try {
  const n = N + WARMUP;
  const { account, apiKey } = ledger.createAccount({ label: 'bench', subscription: 4 * n, freeCallsPerMonth: 0, concurrency: 4, ratePerMinute: 1e9 });
  const usage = { outputPixels: 1_000_000, status: 200 };
  const pair = async (): Promise<void> => ledger.settle(await ledger.reserve(account, 'full'), usage);
  const request = async (): Promise<void> => {
    ledger.takeRate(account, 1);
    const slot = ledger.acquireSlot(account);
    try {
      await ledger.settle(await ledger.reserve(account, 'full'), usage);
    } finally {
      slot?.release();
    }
  };

  const results: Record<string, Stats> = {};
  for (const [name, fn] of [
    ['reserveSettle', pair],
    ['authenticate', () => ledger.authenticate(apiKey)],
    ['balances', () => ledger.balances(account.id)],
    ['fullRequestPath', request],
  ] as const) {
    await time(WARMUP, fn);
    results[name] = stats(await time(N, fn));
  }

  console.log(`ledger bench (${durability}), ${N} samples after ${WARMUP} warm-up`);
  console.log('op'.padEnd(18), 'median µs'.padStart(10), 'p90 µs'.padStart(10), 'p99 µs'.padStart(10));
  for (const [name, s] of Object.entries(results)) {
    console.log(name.padEnd(18), String(s.medianUs).padStart(10), String(s.p90Us).padStart(10), String(s.p99Us).padStart(10));
  }

  const outDir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(outDir, { recursive: true });
  const out = { bench: 'ledger', date: new Date().toISOString(), node: process.version, durability, samples: N, warmup: WARMUP, results };
  writeFileSync(join(outDir, 'ledger.json'), JSON.stringify(out, null, 2) + '\n');
} finally {
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
}
