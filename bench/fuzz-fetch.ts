// bench:faults --faults fuzz-fetch: hostile image hosts for image_url (test/harness/fuzz-hosts.ts: bad framing and headers,
// drips, stalls, resets, redirect chains), fetched for a while by the fetcher itself and then through
// one real server (test/harness/fuzz-fetch-driver.ts), every outcome checked against what the host did.
// Prints a summary per mode, writes bench/results/fuzz-fetch.json, exits 1 when a check failed (the
// first failures are printed with the seed, lane and index that replay them).
//
//   npm run bench:faults -- --faults fuzz-fetch [--seconds 60] [--lanes 8] [--seed 1] [--modes fetcher,service]

import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { cpuFacts } from './cpu-facts.js';
import { runFetchFuzz, type FetchFuzzReport } from '../test/harness/fuzz-fetch-driver.js';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const seconds = Number(flag('seconds', '60'));
const lanes = Number(flag('lanes', '8'));
const seed = Number(flag('seed', '1'));
const modes = flag('modes', 'fetcher,service').split(',');
const reports: FetchFuzzReport[] = [];
for (const mode of modes) {
  console.log(`bench:faults --faults fuzz-fetch (${mode}): ${lanes} lanes for ${seconds} s, seed ${seed}`);
  const r = await runFetchFuzz({ seconds, lanes, seed, service: mode === 'service', timing: true });
  reports.push(r);
  console.log(`  ${r.scenarios} scenarios, slowest ${r.slowestMs} ms`);
  for (const [o, n] of Object.entries(r.outcomes).sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(6)}  ${o}`);
  if (r.credits) console.log(`  credits: ${r.credits.fromHeaders} in headers, ${r.credits.ledgerDebit} debited`);
  for (const f of r.failures.slice(0, 10))
    console.log(`  FAIL ${f.what} (lane ${f.lane}, scenario ${f.index}, seed ${seed}): ${(f.scenario ?? []).join(' / ')}`);
  console.log(`  ${r.failures.length} failed checks`);
}
const cpu = cpuFacts();
const out = path.join(PACKAGE_ROOT, 'bench', 'results');
fs.mkdirSync(out, { recursive: true });
const json = {
  date: new Date().toISOString(),
  cpu: { model: cpu.model, cores: cpu.cores, simd: cpu.simd },
  seconds,
  lanes,
  reports: reports.map((r) => ({ ...r, failures: r.failures.length, firstFailures: r.failures.slice(0, 20) })),
};
fs.writeFileSync(path.join(out, 'fuzz-fetch.json'), `${JSON.stringify(json, null, 1)}\n`);
process.exitCode = reports.some((r) => r.failures.length > 0) ? 1 : 0;
