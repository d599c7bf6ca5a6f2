// The evaluation photos are found beside the checkout, beside the local checkout a fresh clone came
// from, or where $CUTOUT_EVAL_DIR says.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { evalDir } from '../../bench/quality/eval-dir.js';

t.test('env, then beside the repo, then beside its local origin', async (t) => {
  const saved = process.env.CUTOUT_EVAL_DIR;
  delete process.env.CUTOUT_EVAL_DIR;
  t.teardown(() => {
    if (saved !== undefined) process.env.CUTOUT_EVAL_DIR = saved;
  });
  const root = t.testdir({ work: { main: {}, shared: { eval: { dev: { 'manifest.csv': 'id\n' } } } }, tmp: {} });
  const main = path.join(root, 'work', 'main');
  const git = (...args: string[]) => execFileSync('git', args, { stdio: 'ignore' });
  git('init', '-q', main);
  git('-C', main, '-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'x');
  const clone = path.join(root, 'tmp', 'clone');
  git('clone', '-q', main, clone);
  const shared = path.join(root, 'work', 'shared', 'eval', 'dev');

  t.equal(evalDir(main), shared, 'beside the checkout');
  t.equal(evalDir(clone), shared, 'a clone elsewhere finds the data beside the checkout it came from');
  // Outside any git checkout (the test's own fixtures sit inside this repository's).
  const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-evaldir-'));
  t.teardown(() => fs.rmSync(bare, { recursive: true, force: true }));
  t.equal(evalDir(bare), path.resolve(bare, '..', 'shared', 'eval', 'dev'), 'nothing found: the documented place, for the error message');
  process.env.CUTOUT_EVAL_DIR = path.join(root, 'elsewhere');
  t.equal(evalDir(clone), path.join(root, 'elsewhere'), '$CUTOUT_EVAL_DIR wins');
});
