// lmdb-js 3.5.6 corrupts the heap when a commit's page write fails (docs/ledger.md, "Full disk"); the
// ledger keeps LMDB from ever issuing such a write. This runs the ledger through a full disk under valgrind
// (full-disk-child.ts): no invalid read or write, LMDB never printed its "Write error", the disk-full
// refusals happened, and credits, holds and slots come out exact. Root and valgrind only (CI has both).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { mountTmpfs } from '../helpers/tmpfs.js';
import type { FullDiskRun } from './full-disk-child.js';

const CHILD = fileURLToPath(new URL('./full-disk-child.js', import.meta.url));
const VALGRIND_ERROR = 99;
// V8's garbage collector scans the stack conservatively, reading words valgrind counts as uninitialised.
const SUPPRESSIONS = ['Cond', 'Value8']
  .map((kind) => `{\n  v8-conservative-stack-scan-${kind}\n  Memcheck:${kind}\n  fun:*IteratePointersInStack*\n}\n`)
  .join('');

const skip =
  spawnSync('valgrind', ['--version']).status !== 0 ? 'valgrind is not installed' : process.getuid?.() !== 0 ? 'not root: cannot mount a tmpfs' : false;

t.test('the ledger through a full disk under valgrind: no invalid access, LMDB never meets the write error', { skip }, async (t) => {
  const mnt = mountTmpfs(t, 20);
  if ('skip' in mnt) return t.pass('not run', { skip: mnt.skip });
  const supp = path.join(t.testdir(), 'v8.supp');
  fs.writeFileSync(supp, SUPPRESSIONS);
  const child = spawn(
    'valgrind',
    ['--error-limit=no', `--error-exitcode=${VALGRIND_ERROR}`, '--leak-check=no', `--suppressions=${supp}`, process.execPath, CHILD, mnt.dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const summary = /ERROR SUMMARY: (\d+) errors/.exec(err);
  t.equal(summary?.[1], '0', 'valgrind: no errors');
  t.equal(code, 0, `the run exited cleanly (valgrind's error exit is ${VALGRIND_ERROR})${code === 0 ? '' : `\n${err.slice(-4000)}`}`);
  t.notMatch(err, /Write error|Invalid (read|write)/, 'LMDB never printed its write error; no invalid access');
  const run = JSON.parse(out.trim()) as FullDiskRun;
  t.ok(run.grown > 0, `the ledger kept working on its room after the fill (${run.grown} accounts)`);
  t.same(run.refused, { reserve: 'ledger_unavailable', slot: 'ledger_unavailable', account: 'ENOSPC' }, 'then refused new work itself');
  t.same(run.afterFull, { total: 100 - run.charged, holds: 0, slots: 0 }, 'on the full disk: the settle charged, the refunds and the slot came back');
  t.same(run.recovered, { total: 100 - run.recovered.charged, holds: 0, slots: 0, charged: run.charged + 1 }, 'filler removed: work again, credits exact');
});
