// cli/args.ts: a mistyped or repeated flag is a usage error, never ignored (`keys create --credit 100`
// made a key with no credits; `remove --sise full` removed at the default size).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { checkFlags, parseArgs } from '../../src/cli/args.js';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

t.test('unknown flags, with the nearest known one; repeated flags', async (t) => {
  const known = ['credits', 'free-calls', 'json', 'o'];
  t.equal(checkFlags(parseArgs(['--credit', '100']), known), "unknown option '--credit' (did you mean '--credits'?)");
  t.equal(checkFlags(parseArgs(['--free_calls=3']), known), "unknown option '--free_calls' (did you mean '--free-calls'?)");
  t.equal(checkFlags(parseArgs(['--zzzzzz']), known), "unknown option '--zzzzzz'", 'nothing near');
  t.equal(checkFlags(parseArgs(['-x', 'out']), known), "unknown option '-x'", 'one-letter flags are not guessed');
  t.equal(checkFlags(parseArgs(['--credits', '5', '--credits=6']), known), "option '--credits' given more than once");
  t.equal(checkFlags(parseArgs(['-o', 'a', '-o', 'b']), known), "option '-o' given more than once");
  t.equal(checkFlags(parseArgs(['a.png', '--credits', '5', '--json', '-o', 'out', '--', '--not-a-flag']), known), null);
});

t.test('the commands refuse them before touching anything (exit 2)', async (t) => {
  const cli = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
  const dir = t.testdir({});
  const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, CUTOUT_DATA_DIR: dir } });
  const create = run('keys', 'create', '--credit', '100');
  t.equal(create.status, 2);
  t.match(create.stderr, /cutout keys: unknown option '--credit' \(did you mean '--credits'\?\)/);
  t.equal(create.stdout, '', 'no key printed');
  t.equal(run('keys', 'list', '--data', dir).status, 1, 'and no ledger was created');
  t.match(run('keys', 'list', '--credits', '5').stderr, /unknown option '--credits'/, 'a flag of another subcommand');
  t.match(run('usage', '--sinse', '3').stderr, /cutout usage: unknown option '--sinse' \(did you mean '--since'\?\)/);
  const remove = run('remove', path.join(dir, 'x.png'), '--sise', 'full');
  t.equal(remove.status, 2);
  t.match(remove.stderr, /cutout remove: unknown option '--sise' \(did you mean '--size'\?\)/);
  const made = run('keys', 'create', '--credits', '7', `--data=${dir}`, '--json');
  t.equal(made.status, 0, made.stderr);
  t.equal(JSON.parse(made.stdout).balances.subscription, 7, '--data=DIR works like --data DIR');
});

t.test('--help is an answer everywhere: stdout, exit 0; no subcommand at all is a usage error', async (t) => {
  const cli = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
  const dir = t.testdir({});
  const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, CUTOUT_DATA_DIR: dir } });
  for (const args of [
    ['--help'],
    ['help'],
    ['serve', '--help'],
    ['remove', '--help'],
    ['keys', '--help'],
    ['keys', 'help'],
    ['keys', 'create', '--help'],
    ['keys', 'list', '--help'],
    ['keys', 'revoke', '--help'],
    ['keys', 'credit', '--help'],
    ['usage', '--help'],
  ]) {
    const r = run(...args);
    t.equal(r.status, 0, `cutout ${args.join(' ')} exits 0`);
    t.match(r.stdout, /cutout/, `cutout ${args.join(' ')} prints its help on stdout`);
    t.equal(r.stderr, '', `cutout ${args.join(' ')}: nothing on stderr`);
  }
  const bare = run('keys');
  t.equal(bare.status, 2, 'cutout keys alone exits 2');
  t.match(bare.stderr, /cutout keys create/, 'with the help on stderr');
  t.equal(bare.stdout, '');
});
