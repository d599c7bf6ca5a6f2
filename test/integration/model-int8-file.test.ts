// `npm run model -- --from FILE --int8` (src/cli/quantize-file-cli.ts): a user's own fp32 (or fp16)
// file quantised to int8 with the bundled model's calibration and quantisation, checked and runnable with
// `--model-file`. The file is the bundled ISNet rewritten to BiRefNet's conventions (ImageNet input,
// logits, three outputs), calibrated on two dev photos (a mechanical check, not a quality figure: the
// quality of a 35-photo calibration is in docs/models.md), and its masks are compared on a photo it was
// not calibrated on with the fp32 file's and the bundled int8 model's. Calibrating needs real photos,
// so those two tests skip without the research photos (EVAL_SKIP).
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { createRemover } from '../../src/lib/remove.js';
import { runQuantizeFileCli } from '../../src/cli/quantize-file-cli.js';
import { calibrationInput } from '../../src/model/calibration-run.js';
import { decodeModel } from '../../src/model/onnx-transform.js';
import { EVAL_DIR, EVAL_SKIP, syntheticFigure } from '../helpers/core-fixtures.js';
import { writeBirefnetStyle, writeFp16IoStyle, writeSignatureGraph } from '../helpers/family-graphs.js';
import type { PoolOptions } from '../../src/pool/pool-api.js';
import { iou } from '../../bench/quality/mask-metrics.js';
import { matteFromBytes, type Matte } from '../../bench/quality/matte.js';

const PHOTO = path.join(EVAL_DIR, 'images', 'davis_camel_00011.jpg');
const CALIBRATION = ['am_GT04.png', 'davis_goat_00033.jpg'];
const base: PoolOptions = { workers: 1, device: 'cpu' };

/** The cut-out's alpha of PHOTO as a matte (0..1). */
async function alphaWith(opts: PoolOptions): Promise<Matte> {
  const remover = await createRemover({ ...base, ...opts });
  try {
    const out = await remover.remove(fs.readFileSync(PHOTO), { channels: 'alpha' });
    const { data, info } = await sharp(out.data).raw().toBuffer({ resolveWithObject: true });
    return matteFromBytes(data, info.width, info.height, info.channels, 0);
  } finally {
    await remover.close();
  }
}

/** IoU at 0.5 (alpha ≥ 128) and the mean |Δ| in levels. */
function agreement(a: Matte, b: Matte): { iou: number; mean: number } {
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i]! - b.data[i]!);
  return { iou: iou(a, b), mean: (255 * sum) / a.data.length };
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } } };
}

/** DIR/calibration holding the CALIBRATION photos (copied from the dev set). */
function calibrationFolder(dir: string): string {
  const photos = path.join(dir, 'calibration');
  fs.mkdirSync(photos);
  for (const p of CALIBRATION) fs.copyFileSync(path.join(EVAL_DIR, 'images', p), path.join(photos, p));
  return photos;
}

t.test('an fp32 file of BiRefNet conventions to int8: written, checked, and giving the same cut-out', { skip: EVAL_SKIP }, async (t) => {
  const dir = t.testdir();
  const file = writeBirefnetStyle(dir);
  const photos = calibrationFolder(dir);
  fs.writeFileSync(path.join(photos, 'notes.txt'), 'not a photo: skipped');
  const c = io();
  const code = await runQuantizeFileCli(['--from', file, '--int8', '--model-family', 'birefnet', '--calibration-photos', photos], c.io);
  t.equal(code, 0, c.err.join(''));
  const out = path.join(dir, 'birefnet-style.int8.onnx');
  const said = c.out.join('');
  t.match(said, /calibrating on 2 photos at 1024x1024/);
  t.match(said, new RegExp(`${out.replace(/[.]/g, '\\.')} \\(int8, family birefnet, sha256 [0-9a-f]{64}\\): 11\\d convolutions int8`));
  t.match(said, /run it with: cutout serve --model-file .*birefnet-style\.int8\.onnx --model-family birefnet/);

  // The graph: int8 weights behind DequantizeLinear, uint8 activations between Q/DQ pairs, the
  // family's input and outputs untouched; a third of the fp32 file's size or less.
  const g = decodeModel(fs.readFileSync(out)).graph;
  const ops = (type: string) => g.node.filter((n: { opType: string }) => n.opType === type).length;
  t.ok(ops('QuantizeLinear') > 100 && ops('DequantizeLinear') > 200, `${ops('QuantizeLinear')} Q, ${ops('DequantizeLinear')} DQ`);
  t.ok(g.initializer.filter((i: { dataType: number }) => i.dataType === 3).length > 100, 'int8 weight tensors');
  t.same(
    g.input.map((i: { name: string }) => i.name),
    ['input_image'],
  );
  t.same(
    g.output.map((o: { name: string }) => o.name),
    decodeModel(fs.readFileSync(file)).graph.output.map((o: { name: string }) => o.name),
  );
  const ratio = fs.statSync(out).size / fs.statSync(file).size;
  t.ok(ratio < 0.34, `int8 file ${(100 * ratio).toFixed(1)}% of the fp32 one`);
  const table = JSON.parse(fs.readFileSync(path.join(dir, 'birefnet-style.int8.calibration.json'), 'utf8'));
  t.same(table.photos, CALIBRATION.slice().sort(), 'the calibration photos recorded');
  t.ok(
    Object.values(table.ranges).every((r) => Array.isArray(r) && (r as number[])[0]! <= (r as number[])[1]!),
    'a [lo, hi] per tensor',
  );

  // Through the service as `--model-file`: the cut-out of a photo it was not calibrated on.
  const int8 = await alphaWith({ modelFile: out, modelFamily: 'birefnet' });
  const fp32 = await alphaWith({ modelFile: file, modelFamily: 'birefnet' });
  const bundled = await alphaWith({ model: 'isnet-int8' });
  const vsFp32 = agreement(int8, fp32);
  const vsBundled = agreement(int8, bundled);
  t.ok(vsFp32.iou > 0.97 && vsFp32.mean < 3, `int8 file vs its fp32 source: IoU ${vsFp32.iou.toFixed(4)}, mean |Δ| ${vsFp32.mean.toFixed(2)}`);
  t.ok(
    vsBundled.iou > 0.97 && vsBundled.mean < 3,
    `int8 file vs the bundled isnet-int8: IoU ${vsBundled.iou.toFixed(4)}, mean |Δ| ${vsBundled.mean.toFixed(2)}`,
  );
  t.ok(fp32.data.some((v) => v >= 0.5) && fp32.data.some((v) => v < 0.5), 'the camel is cut out, not all or nothing');
});

t.test('an fp16 file with float16 ends to int8: widened to fp32 first, then the same quantisation', { skip: EVAL_SKIP }, async (t) => {
  const dir = t.testdir();
  const file = writeFp16IoStyle(dir);
  const photos = calibrationFolder(dir);
  const c = io();
  const code = await runQuantizeFileCli(['--from', file, '--int8', '--model-family', 'isnet', '--calibration-photos', photos], c.io);
  t.equal(code, 0, c.err.join(''));
  t.match(c.out.join(''), /widened to fp32 first: \d{3} fp16 tensors, \d+ casts/);
  const out = path.join(dir, 'isnet-fp16-io.int8.onnx');
  const g = decodeModel(fs.readFileSync(out)).graph;
  t.same([g.input[0].type.tensorType.elemType, g.output[0].type.tensorType.elemType], [1, 1], 'float32 ends: it runs as an fp32 file would');
  t.notOk(
    g.initializer.some((i: { dataType: number }) => i.dataType === 10),
    'no fp16 tensor left',
  );
  t.ok(g.initializer.filter((i: { dataType: number }) => i.dataType === 3).length > 100, 'int8 weight tensors');
  const int8 = await alphaWith({ modelFile: out, modelFamily: 'isnet' });
  const bundled = await alphaWith({ model: 'isnet-int8' });
  const a = agreement(int8, bundled);
  t.ok(a.iou > 0.97 && a.mean < 3, `int8 of the fp16 file vs the bundled isnet-int8: IoU ${a.iou.toFixed(4)}, mean |Δ| ${a.mean.toFixed(2)}`);
});

t.test('calibration inputs: NHWC is the NCHW tensor with its channels last', async (t) => {
  const photo = path.join(t.testdir(), 'figure.jpg');
  fs.writeFileSync(photo, await syntheticFigure(854, 480));
  const spec = { name: 'x', width: 48, height: 32, mean: [120, 110, 100], std: [60, 58, 57] };
  const nchw = await calibrationInput(photo, spec);
  const nhwc = await calibrationInput(photo, { ...spec, layout: 'nhwc' });
  const plane = 48 * 32;
  t.equal(nhwc.length, 3 * plane);
  t.ok(
    Array.from({ length: plane }, (_, i) => i).every((i) => [0, 1, 2].every((c) => nhwc[i * 3 + c] === nchw[c * plane + i])),
    'every value in its place',
  );
  t.ok(
    nchw.some((v) => v !== nchw[0]),
    'a photo, not a constant',
  );
});

t.test('refused with a reason: usage errors exit 2, files that cannot be quantised exit 1', async (t) => {
  const dir = t.testdir();
  const help = io();
  t.equal(await runQuantizeFileCli(['--help'], help.io), 0);
  t.match(help.out.join(''), /^usage: cutout model --from FILE --int8 \[--model-family isnet\|u2net\|birefnet\|rmbg\|custom\]/);
  const usage = io();
  t.equal(await runQuantizeFileCli(['--from', 'x.onnx'], usage.io), 2);
  t.match(usage.err.join(''), /^cutout model: --from FILE needs --int8/);
  t.equal(await runQuantizeFileCli(['--int8'], usage.io), 2);
  t.match(usage.err.join(''), /--from needs a model file/);
  t.equal(await runQuantizeFileCli(['--from', 'x.onnx', '--int8', '--model-family', 'resnet'], usage.io), 2);
  t.match(usage.err.join(''), /--model-family must be one of isnet, u2net, birefnet, rmbg, custom, not 'resnet'/);
  t.equal(await runQuantizeFileCli(['--from', 'x.onnx', '--int8', '--bits', '4'], usage.io), 2);
  t.match(usage.err.join(''), /Unknown option '--bits'/);

  const missing = io();
  t.equal(await runQuantizeFileCli(['--from', path.join(dir, 'none.onnx'), '--int8', '--model-family', 'isnet'], missing.io), 1);
  t.match(missing.err.join(''), /^cutout model: Could not read the model file .*none\.onnx: ENOENT/);

  // A file that breaks its family is refused before any calibration, as `serve` refuses it.
  const small = writeSignatureGraph(dir, 'small.onnx', {
    inputs: [{ name: 'input', elemType: 1, dims: [1, 3, 512, 512] }],
    outputs: [{ name: 'output', elemType: 1, dims: [1, 1, 512, 512] }],
  });
  const wrong = io();
  t.equal(await runQuantizeFileCli(['--from', small, '--int8', '--model-family', 'birefnet'], wrong.io), 1);
  t.match(wrong.err.join(''), /small\.onnx \(family birefnet\) does not fit: input 'input' is \[1, 3, 512, 512\], expected 1024x1024/);

  const file = writeBirefnetStyle(dir);
  const empty = path.join(dir, 'empty');
  fs.mkdirSync(empty);
  const none = io();
  t.equal(await runQuantizeFileCli(['--from', file, '--int8', '--model-family', 'birefnet', '--calibration-photos', empty], none.io), 1);
  t.match(none.err.join(''), /The calibration photos folder .*empty has no \.jpg, \.png or \.webp files/);
  // A calibration folder holding a file that only looks like a photo: refused, the file named.
  const broken = path.join(dir, 'broken');
  fs.mkdirSync(broken);
  fs.writeFileSync(path.join(broken, 'fake.jpg'), Buffer.from('<html>not a JPEG</html>'));
  const fake = io();
  t.equal(await runQuantizeFileCli(['--from', file, '--int8', '--model-family', 'birefnet', '--calibration-photos', broken], fake.io), 1);
  t.match(fake.err.join(''), /^cutout model: The calibration photo .*fake\.jpg could not be read: /);
  const self = io();
  t.equal(await runQuantizeFileCli(['--from', file, '--int8', '--model-family', 'birefnet', '--out', file], self.io), 1);
  t.match(self.err.join(''), /--out .* is the model file itself/);
  t.notOk(fs.existsSync(path.join(dir, 'birefnet-style.int8.onnx')), 'nothing written');
});
