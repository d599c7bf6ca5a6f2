// bench:soak: sustained load on one real server, N requests at each concurrency, preview and full
// mixed, over real photos (the eval/dev photos read in place, plus the large Debian photos of
// bench/photos.ts unless --no-large). Prints a table and writes bench/results/soak.json and soak.md.
//
//   npm run bench:soak -- [--requests 1000] [--concurrency 4,8] [--sizes preview,full] [--workers 1]
//                         [--model NAME] [--no-large] [--budget-s 3600]

import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { evalDir } from './quality/eval-dir.js';
import { benchPhotos } from './photos.js';
import { runSoak, type SoakReport } from '../test/harness/soak-driver.js';
import { markdownTable } from '../test/harness/stats.js';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const requests = Number(flag('requests') ?? '1000');
const concurrencies = (flag('concurrency') ?? '4,8').split(',').map(Number);
const sizes = (flag('sizes') ?? 'preview,full').split(',');
const workers = Number(flag('workers') ?? '1');
const model = flag('model');
const budgetMs = Number(flag('budget-s') ?? '3600') * 1000;

async function photos(): Promise<string[]> {
  const dir = path.join(evalDir(), 'images');
  const dev = fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .sort()
        .map((f) => path.join(dir, f))
    : [];
  if (process.argv.includes('--no-large')) return dev;
  const large = (await benchPhotos()).filter((p) => !p.file.startsWith(dir)).map((p) => p.file);
  // Spread the large photos through the cycle instead of bunching them.
  const out = [...dev];
  large.forEach((f, i) => out.splice(Math.round(((i + 1) * dev.length) / (large.length + 1)) + i, 0, f));
  return out;
}

function row(r: SoakReport): (string | number)[] {
  return [
    r.concurrency,
    r.requests,
    r.answered,
    r.unanswered,
    Object.entries(r.statuses)
      .map(([s, n]) => `${s}:${n}`)
      .join(' '),
    r.imagesPerS,
    r.latencyMs.p50,
    r.latencyMs.p99,
    r.latencyMs.max,
    r.latencyMs.maxOverP50,
    r.queueWaitMs.max,
    `${r.credits.fromHeaders}/${r.credits.ledgerDelta}${r.credits.exact ? '' : ' MISMATCH'}`,
    `${r.rssMb.idle} (${r.rssMb.startup})`,
    r.rssMb.idleAfter5s,
    r.rssMb.hwm,
    `${r.rssMb.secondTenth}→${r.rssMb.lastTenth} (${r.rssMb.growthPct}%)`,
    r.rssMb.growthPerRequestMb,
    `${r.faultsPerRequest.all} (${r.faultsPerRequest.secondHalf})`,
  ];
}

const HEADER = [
  'conc',
  'requests',
  'answered',
  'unanswered',
  'statuses',
  'img/s',
  'p50 ms',
  'p99 ms',
  'max ms',
  'max/p50',
  'max queue ms',
  'credits hdr/ledger',
  'idle MB (at start)',
  'idle MB 5 s after the last answer',
  'peak MB',
  'RSS 2nd→last tenth',
  'MB/request (2nd half)',
  'minor faults/request (2nd half)',
];

const files = await photos();
console.log(
  `bench:soak: ${requests} requests × concurrency ${concurrencies.join(',')} on ${workers} worker(s), model ${model ?? '(default)'}, sizes ${sizes.join('+')}, ${files.length} photos`,
);
const reports: SoakReport[] = [];
for (const concurrency of concurrencies) {
  console.log(`concurrency ${concurrency}:`);
  const r = await runSoak({ requests, concurrency, photos: files, sizes, workers, ...(model && { model }), budgetMs, progress: (l) => console.log(l) });
  reports.push(r);
  console.log(markdownTable(HEADER, [row(r)]));
  for (const bad of r.non200.slice(0, 10)) console.log(`  non-200: #${bad.index} ${bad.photo} ${bad.size} → ${bad.status} ${bad.error ?? ''}`);
}

const table = markdownTable(HEADER, reports.map(row));
const cpu = reports[0]?.cpu;
const md = `# bench:soak ${new Date().toISOString()}\n\nCPU: ${cpu?.model} × ${cpu?.cores}; flags ${cpu?.flags.join(' ')}\n\n${table}\n`;
console.log(`\n${md}`);
const out = path.join(PACKAGE_ROOT, 'bench', 'results');
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'soak.json'), `${JSON.stringify({ date: new Date().toISOString(), reports }, null, 1)}\n`);
fs.writeFileSync(path.join(out, 'soak.md'), md);
console.log(`wrote ${path.join(out, 'soak.json')} and soak.md`);
