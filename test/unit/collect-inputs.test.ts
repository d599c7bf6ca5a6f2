// cli/collect-inputs.ts: what `cutout remove` reads and where its results go. Links are followed but
// nothing runs twice, only regular files are read, earlier results are not inputs, and no result
// overwrites another result or an input.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { collectInputs, resultStems } from '../../src/cli/collect-inputs.js';

t.test('a link loop, a second link to a file, a FIFO, a device, a dangling link, earlier results', async (t) => {
  const dir = t.testdir({ a: { 'x.png': 'x', 'y.jpg': 'y', 'y.cutout.png': 'old result', 'y.cutout-2.jpg': 'old result, renamed' }, b: { 'z.webp': 'z' } });
  fs.symlinkSync('..', path.join(dir, 'a', 'up'));
  fs.symlinkSync('x.png', path.join(dir, 'a', 'w.png'));
  fs.symlinkSync('/dev/zero', path.join(dir, 'b', 'zero.png'));
  fs.symlinkSync('nowhere.png', path.join(dir, 'b', 'dangling.png'));
  execFileSync('mkfifo', [path.join(dir, 'b', 'fifo.png')]);
  const r = collectInputs([dir]);
  const rel = (s: string) => path.relative(dir, s.split(': ')[0]!);
  t.same(
    r.files.map((f) => path.relative(dir, f)),
    ['a/w.png', 'a/y.jpg', 'b/z.webp'],
    'each photo once, folders sorted',
  );
  t.same(r.skipped.map(rel), ['a/up', 'a/x.png', 'a/y.cutout-2.jpg', 'a/y.cutout.png', 'b/fifo.png', 'b/zero.png']);
  t.match(r.skipped.join('\n'), /a\/up: the folder .*, already searched/);
  t.match(r.skipped.join('\n'), /a\/x\.png: the same file as .*a\/w\.png/);
  t.match(r.skipped.join('\n'), /y\.cutout\.png: a result of cutout/);
  t.match(r.skipped.join('\n'), /fifo\.png: not a regular file[\s\S]*zero\.png: not a regular file/);
  t.same(r.failed.map(rel), ['b/dangling.png']);
  t.match(r.failed[0], /no such file or folder$/);
});

t.test('named arguments: a result named is processed, the same file twice once, a missing one fails', async (t) => {
  const dir = t.testdir({ 'p.cutout.png': 'named result', 'q.png': 'q' });
  const r = collectInputs([path.join(dir, 'p.cutout.png'), path.join(dir, 'q.png'), path.join(dir, 'q.png'), path.join(dir, 'nope.png')]);
  t.same(
    r.files.map((f) => path.basename(f)),
    ['p.cutout.png', 'q.png'],
  );
  t.equal(r.skipped.length, 1);
  t.match(r.skipped[0], /q\.png: the same file as /);
  t.match(r.failed, [/nope\.png: no such file or folder/]);
});

const stems = (...args: Parameters<typeof resultStems>) => resultStems(...args).map((r) => r.stem);

t.test('result names: shared names get -2, -3 in input order; no input is ever overwritten', async (t) => {
  const dir = t.testdir({ out: { 'x.png': 'a photo in OUT', 'y.webp': 'another' }, a: { 'x.jpg': 'a' }, b: { 'x.jpg': 'b' } });
  const out = path.join(dir, 'out');
  const p = (...s: string[]) => path.join(dir, ...s);
  t.same(
    stems([p('a', 'x.jpg'), p('b', 'x.jpg'), p('x-2.png')], out),
    [path.join(out, 'x'), path.join(out, 'x-2'), path.join(out, 'x-2-2')],
    'OUT holds no input',
  );
  t.same(
    stems([p('out', 'x.png'), p('a', 'x.jpg'), p('out', 'y.webp')], out),
    [path.join(out, 'x-2'), path.join(out, 'x-3'), path.join(out, 'y-2')],
    'x.* and y.* in OUT are inputs: no result takes those names, whatever its extension',
  );
  t.same(stems(['d/x.png', 'd/x.jpg'], undefined), ['d/x.cutout', 'd/x.cutout-2'], 'beside the inputs');
  t.same(
    resultStems([p('a', 'x.jpg'), p('b', 'x.jpg')], out)[1],
    { stem: path.join(out, 'x-2'), natural: path.join(out, 'x') },
    'a renamed result says where it would have gone',
  );
  fs.symlinkSync(out, p('alias'));
  t.same(stems([p('out', 'x.png')], p('alias')), [p('alias', 'x-2')], 'through a link to OUT too');
});
