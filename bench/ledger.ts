// Ledger micro-benchmark, LMDB and PostgreSQL side by side in one run:
//   npm run bench:ledger [-- --ledger postgres://user:password@host:port/database]
// Both through the async Ledger the server uses: reserve+settle pairs, authenticate, balances, and one
// request's full ledger path (authenticate, slot, rate, reserve, settle, release). Prints median/p90/p99
// in µs with the CPU (lscpu) and writes bench/results/ledger.json. Without --ledger (or
// CUTOUT_LEDGER_URL) only LMDB runs. The PostgreSQL run adds one 'ledger-bench' account to that database.
// LEDGER_BENCH_N samples per op (default 5000), LEDGER_BENCH_DURABILITY periodic|fsync (default periodic).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LedgerBackend } from '../src/ledger/ledger.js';
import { openLedger } from '../src/ledger/open-ledger.js';
import { cpuFacts } from './cpu-facts.js';
import { parseDurability } from '../src/domain/durability.js';
import { parseLedgerUrl, redactUrl } from '../src/domain/ledger-url.js';

const N = Number(process.env.LEDGER_BENCH_N ?? 5000);
const WARMUP = Math.min(1000, N);
const durability = parseDurability(process.env.LEDGER_BENCH_DURABILITY) ?? 'periodic';
const argv = process.argv.slice(2);
const flag = argv.indexOf('--ledger');
const url = parseLedgerUrl(flag >= 0 ? argv[flag + 1] : process.env.CUTOUT_LEDGER_URL);

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

async function time(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return out;
}

async function run(ledger: LedgerBackend): Promise<Record<string, Stats>> {
  const n = N + WARMUP;
  const { account, apiKey } = await ledger.createAccount({
    label: 'ledger-bench',
    subscription: 4 * n,
    freeCallsPerMonth: 0,
    concurrency: 4,
    ratePerMinute: 1e9,
  });
  const usage = { outputPixels: 1_000_000, status: 200 };
  const pair = async (): Promise<void> => void (await ledger.settle(await ledger.reserve(account, 'full'), usage));
  const request = async (): Promise<void> => {
    const acct = (await ledger.authenticate(apiKey))!;
    const slot = await ledger.acquireSlot(acct);
    try {
      await ledger.takeRate(acct, 1);
      await ledger.settle(await ledger.reserve(acct, 'full'), usage);
    } finally {
      await slot?.release();
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
  return results;
}

const backends: Record<string, Record<string, Stats>> = {};
const dir = mkdtempSync(join(tmpdir(), 'cutout-ledger-bench-'));
try {
  const lmdb = await openLedger({ dataDir: dir, durability });
  try {
    backends.lmdb = await run(lmdb);
  } finally {
    await lmdb.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (url) {
  const postgres = await openLedger({ url, dataDir: dir, durability });
  try {
    backends.postgres = await run(postgres);
  } finally {
    await postgres.close();
  }
}

const { model, flags } = cpuFacts();
console.log(`ledger bench (${durability}), ${N} samples after ${WARMUP} warm-up; CPU: ${model}`);
const names = Object.keys(backends);
console.log(['op'.padEnd(16), ...names.map((b) => `${b} median / p90 / p99 µs`.padStart(36))].join(''));
for (const op of Object.keys(backends.lmdb!)) {
  console.log(
    [
      op.padEnd(16),
      ...names.map((b) => {
        const s = backends[b]![op]!;
        return `${s.medianUs} / ${s.p90Us} / ${s.p99Us}`.padStart(36);
      }),
    ].join(''),
  );
}

const outDir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
mkdirSync(outDir, { recursive: true });
const out = {
  bench: 'ledger',
  date: new Date().toISOString(),
  node: process.version,
  cpu: { model, flags },
  durability,
  samples: N,
  warmup: WARMUP,
  ...(url && { postgres: redactUrl(url) }),
  results: backends,
};
writeFileSync(join(outDir, 'ledger.json'), JSON.stringify(out, null, 2) + '\n');
