// `cutout remove` processes files and folders, skips non-images without failing, and exits non-zero when an image fails.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import t from 'tap';
import sharp from 'sharp';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';
import { syntheticPhoto } from '../helpers/core-fixtures.js';

const CLI = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

t.test('a folder with an image and a text file', async (t) => {
  const dir = t.testdir({ 'notes.txt': 'not an image', nested: {} });
  fs.writeFileSync(path.join(dir, 'nested', 'disc.jpg'), await syntheticPhoto(120, 90));
  const out = path.join(dir, 'out');
  const r = run(['remove', dir, '-o', out, '--size', 'preview', '--format', 'png', '--workers', '1']);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^1 done, 0 failed, 1 skipped in [\d.]+ s$/m);
  t.match(r.stderr, /skipped .*notes\.txt: not a JPEG, PNG or WebP image/);
  const meta = await sharp(fs.readFileSync(path.join(out, 'disc.png'))).metadata();
  t.same([meta.width, meta.height, meta.channels], [120, 90, 4]);
});

t.test('a broken image fails the run; bad flags are usage errors', async (t) => {
  const dir = t.testdir({ 'broken.jpg': Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]) });
  const r = run(['remove', path.join(dir, 'broken.jpg'), '--workers', '1']);
  t.equal(r.status, 1);
  t.match(r.stderr, /broken\.jpg: The image file is truncated or corrupt \(JPEG data ends early\)\.\n/, 'the damage in plain words');
  t.match(r.stdout, /0 done, 1 failed, 0 skipped/);
  const missing = run(['remove', path.join(dir, 'nope.png'), '--workers', '1']);
  t.equal(missing.status, 1);
  t.match(missing.stderr, /nope\.png: no such file or folder/);
  const bad = run(['remove', dir, '--size', 'gigantic']);
  t.equal(bad.status, 2);
  t.match(bad.stderr, /unknown --size 'gigantic'/);
  const quality = run(['remove', dir, '--quality', 'ultra']);
  t.equal(quality.status, 2);
  t.match(quality.stderr, /unknown --quality 'ultra' \(expected fast, balanced, best\)/);
  const color = run(['remove', dir, '--bg-color', 'zzz']);
  t.equal(color.status, 2);
  const shadow = run(['remove', dir, '--shadow', 'long']);
  t.equal(shadow.status, 2);
  t.match(shadow.stderr, /cutout remove: unknown --shadow 'long' \(expected none, drop, 3D, car\)/);
  t.match(run(['remove', dir, '--shadow', 'car', '--shadow-opacity', '101']).stderr, /--shadow-opacity expects an integer from 0 to 100/);
  const model = run(['remove', dir, '--model', 'isnet-huge', '--workers', '1']);
  t.equal(model.status, 1, 'an unknown model processes nothing');
  t.match(model.stderr, /Unknown model 'isnet-huge'; models\/manifest.json lists isnet-fp32, isnet-int8, isnet-fp16/);
  t.equal(run(['remove']).status, 2);
  t.match(run(['remove', '--help']).stdout, /Usage: cutout remove/);
});

t.test('a link loop runs each photo once; results never overwrite a photo or each other', async (t) => {
  const dir = t.testdir({ a: {}, b: {} });
  const photo = await syntheticPhoto(80, 60);
  fs.writeFileSync(path.join(dir, 'a', 'x.jpg'), photo);
  fs.writeFileSync(path.join(dir, 'b', 'x.jpg'), photo);
  fs.symlinkSync('..', path.join(dir, 'a', 'up'));
  const first = run(['remove', dir, '--size', 'preview', '--format', 'png', '--workers', '1']);
  t.equal(first.status, 0, first.stderr);
  t.match(first.stdout, /^2 done, 0 failed, 1 skipped in/m);
  t.match(first.stderr, /skipped .*a\/up: the folder .*, already searched/);
  t.ok(fs.existsSync(path.join(dir, 'a', 'x.cutout.png')) && fs.existsSync(path.join(dir, 'b', 'x.cutout.png')));
  // Again, into a/: the earlier results are not inputs, a/x.jpg's result does not replace b/x.jpg's.
  const again = run(['remove', dir, '-o', path.join(dir, 'a'), '--size', 'preview', '--format', 'jpg', '--workers', '1']);
  t.equal(again.status, 0, again.stderr);
  t.match(again.stdout, /^2 done, 0 failed, 3 skipped in/m, 'the loop and both earlier results skipped');
  t.match(again.stderr, /wrote .*a\/x\.jpg → .*a\/x-2\.jpg \(.*a\/x\.\* is an input or another result\)/);
  t.match(again.stderr, /wrote .*b\/x\.jpg → .*a\/x-3\.jpg/);
  t.same(fs.readFileSync(path.join(dir, 'a', 'x.jpg')), photo, 'the photo in OUT is untouched');
  t.same(fs.readdirSync(path.join(dir, 'a')).sort(), ['up', 'x-2.jpg', 'x-3.jpg', 'x.cutout.png', 'x.jpg']);
});
