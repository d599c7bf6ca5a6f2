// bench:compare — this checkout against another one (e.g. a worktree of an older commit), end to end
// on the CPU with each checkout's default CPU model and sizing (1 worker), photo by photo, the two
// taking turns (base, head, base, head…) so machine noise hits both alike. Strict turns, not an order
// flipped each round: a flip leaves each checkout idle for two of the other's requests, longer than
// a pool waits before handing its memory back (src/pool/idle-release.ts), so no request would meet
// the steady state a client sending one photo after another gets. This checkout's child runs with
// the environment bin/cutout gives node (src/process/launch-env.ts), the other with the one its own
// bin/cutout gave (its dist/src/process/launch-env.js; this process's environment where it has none),
// so that each runs as its users ran it. A GLIBC_TUNABLES set by the caller goes to both.
// Each checkout runs in its own long-lived child process (its pool loaded once). Prints medians per
// stage and writes bench/results/compare.json.
//
// Each answer also carries the minor page faults the child took for it (all threads) and its RSS.
//
//   npm run bench:compare -- --base ../wt-base [--model isnet-int8] [--rounds 9] [--size full] [--photos name,name]
//   (names: bench/photos.ts's, or 'nuthatch-<N>mp', the nuthatch at N megapixels)
//
// --model names the model both checkouts run (each checkout's own default otherwise: older ones
// defaulted to isnet-fp32).
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { launchEnv } from '../src/process/launch-env.js';
import { launchEnvOf } from './launch-env-rerun.js';
import { namedBenchPhotos } from './photos.js';
import { cpuInfo } from '../test/harness/soak-driver.js';
import { markdownTable, median } from '../test/harness/stats.js';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

interface Answer {
  ms: number;
  faults: number;
  rssMB: number;
  ok: boolean;
  code?: string;
  timings: Record<string, number>;
}

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'compare-child.js');
const WARMUP = 2;

function start(root: string, model: string | undefined, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = fork(CHILD, [root, ...(model ? [model] : [])], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${root}: child exited (${code}) before its pool was ready`)));
  });
}

function ask(child: ChildProcess, file: string, size: string): Promise<Answer> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as Answer));
    child.send({ file, size });
  });
}

async function main(): Promise<void> {
  const base = flag('base');
  if (!base || !fs.existsSync(path.join(base, 'dist', 'src', 'pool', 'pool.js')))
    throw new Error('--base must name a built checkout (its dist/src/pool/pool.js)');
  const rounds = Number(flag('rounds') ?? '9');
  const size = flag('size') ?? 'full';
  const model = flag('model');
  const wanted = flag('photos')?.split(',');
  const photos = await namedBenchPhotos(wanted);
  const trees = { base: path.resolve(base), head: PACKAGE_ROOT };
  const children = { base: await start(trees.base, model, await launchEnvOf(trees.base)), head: await start(trees.head, model, launchEnv()) };
  type Runs = { ms: number[]; faults: number[]; rssMB: number[]; stages: Record<string, number[]>; failures: string[] };
  const results: Array<{ photo: string; tree: 'base' | 'head' } & Runs> = [];
  const emptyRuns = (): Runs => ({ ms: [], faults: [], rssMB: [], stages: {}, failures: [] });
  for (const photo of photos) {
    const runs = { base: emptyRuns(), head: emptyRuns() };
    for (let round = 0; round < WARMUP + rounds; round++) {
      for (const tree of ['base', 'head'] as const) {
        const a = await ask(children[tree], photo.file, size);
        if (round < WARMUP) continue;
        if (!a.ok) runs[tree].failures.push(a.code ?? 'failed');
        runs[tree].ms.push(a.ms);
        runs[tree].faults.push(a.faults);
        runs[tree].rssMB.push(a.rssMB);
        for (const [k, v] of Object.entries(a.timings)) (runs[tree].stages[k] ??= []).push(v);
      }
    }
    for (const tree of ['base', 'head'] as const) results.push({ photo: photo.name, tree, ...runs[tree] });
    const b = median(runs.base.ms);
    const h = median(runs.head.ms);
    const f = (t: 'base' | 'head') => median(runs[t].faults).toFixed(0);
    console.error(
      `  ${photo.name}: base ${b.toFixed(0)} ms, head ${h.toFixed(0)} ms (head/base ${(h / b).toFixed(2)}); faults per request base ${f('base')}, head ${f('head')}`,
    );
  }
  for (const c of Object.values(children)) c.send('exit');

  const stageNames = ['decode', 'infer', 'decodeOutput', 'composite', 'encode'];
  const rows = results.map((r) => [
    r.photo,
    r.tree,
    median(r.ms).toFixed(0),
    ...stageNames.map((s) => (r.stages[s] ? median(r.stages[s]!).toFixed(0) : '')),
    median(r.faults).toFixed(0),
    Math.max(...r.rssMB).toFixed(0),
    r.failures.length,
  ]);
  const table = markdownTable(
    ['photo', 'checkout', 'median ms', ...stageNames.map((s) => `${s} ms`), 'minor faults per request (median)', 'RSS after, max MB', 'failures'],
    rows,
  );
  const cpu = cpuInfo();
  const head = `# bench:compare (${new Date().toISOString()})\n\nbase ${trees.base}, head ${trees.head}; size=${size}; model ${model ?? "each checkout's default"}; ${rounds} rounds (+${WARMUP} warm-up), turns alternate (base, head); ${cpu.model}, ${cpu.cores} cores, flags ${cpu.flags.join(' ')}\n\n`;
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'compare.json'),
    `${JSON.stringify({ date: new Date().toISOString(), size, model: model ?? null, rounds, trees, cpu, results }, null, 2)}\n`,
  );
  fs.writeFileSync(path.join(dir, 'compare.md'), `${head}${table}\n`);
  process.stdout.write(`${head}${table}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
