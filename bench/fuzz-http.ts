// bench:faults --faults fuzz-http: hostile requests against one real server for a while (test/harness/fuzz-driver.ts), every
// answer checked. Prints a summary, writes bench/results/fuzz-http.json, exits 1 when a check failed
// (the first failures are printed with the seed, lane and index that replay them).
//
//   npm run bench:faults -- --faults fuzz-http [--seconds 120] [--lanes 6] [--seed 1] [--tls] [--ledger postgres://…] [-- <serve flags>]
//
// --tls: the server serves HTTPS (a throwaway self-signed certificate) and every request goes over TLS;
// --ledger: the key and the server use that PostgreSQL ledger (credits are still checked exactly);
// flags after a second `--` go to `cutout serve` as they are (e.g. `-- --processes 2 --port 18931`:
// a group needs a fixed port).

import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { cpuFacts } from './cpu-facts.js';
import { runFuzz } from '../test/harness/fuzz-driver.js';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const split = process.argv.indexOf('--', 2);
const serveArgs = split >= 0 ? process.argv.slice(split + 1) : [];
const ledgerUrl = flag('ledger', '');
const opts = {
  seconds: Number(flag('seconds', '120')),
  lanes: Number(flag('lanes', '6')),
  seed: Number(flag('seed', '1')),
  serveArgs,
  tls: process.argv.slice(2, split >= 0 ? split : undefined).includes('--tls'),
  ...(ledgerUrl ? { ledgerUrl } : {}),
};
const extra = [opts.tls && 'over TLS', ledgerUrl && 'a PostgreSQL ledger', serveArgs.length > 0 && `serve ${serveArgs.join(' ')}`].filter(Boolean).join(', ');
console.log(`bench:faults --faults fuzz-http: ${opts.lanes} lanes for ${opts.seconds} s, seed ${opts.seed}${extra ? `; ${extra}` : ''}`);
const r = await runFuzz(opts);
const cpu = cpuFacts();
console.log(`server: ${r.server}`);
console.log(
  `sent ${r.sent}; statuses ${Object.entries(r.statuses)
    .map(([s, n]) => `${s}:${n}`)
    .join(' ')}`,
);
console.log(
  `closed unanswered by uWS, by reason: ${
    Object.entries(r.closedUnansweredBy)
      .map(([w, n]) => `${w}: ${n}`)
      .join('; ') || 'none'
  }`,
);
console.log(`credits: ${r.credits.fromHeaders} in headers, ${r.credits.ledgerDebit} debited; server RSS ${r.serverRssMb.start} → ${r.serverRssMb.end} MB`);
for (const f of r.failures.slice(0, 10))
  console.log(`FAIL ${f.what} (lane ${f.lane}, request ${f.index}, seed ${r.seed}): ${JSON.stringify(f.request ?? {}).slice(0, 600)}`);
console.log(`${r.failures.length} failed checks`);
const out = path.join(PACKAGE_ROOT, 'bench', 'results');
fs.mkdirSync(out, { recursive: true });
const report = {
  date: new Date().toISOString(),
  cpu: { model: cpu.model, cores: cpu.cores, simd: cpu.simd },
  ledger: ledgerUrl ? 'postgres' : 'lmdb',
  tls: opts.tls,
  serveArgs,
  ...r,
  failures: r.failures.length,
  firstFailures: r.failures.slice(0, 20),
};
fs.writeFileSync(path.join(out, 'fuzz-http.json'), `${JSON.stringify(report, null, 1)}\n`);
process.exitCode = r.failures.length > 0 ? 1 : 0;
