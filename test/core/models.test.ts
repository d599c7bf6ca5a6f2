// The int8 default and the fp32 model it is calibrated from: both load through the pool by name and
// agree on real photos.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import sharp from 'sharp';
import { createRemover } from '../../src/lib/remove.js';
import { modelEntry, readManifest } from '../../src/model/manifest.js';
import { EVAL_DIR, EVAL_SKIP, readManifest as readEvalManifest } from '../helpers/core-fixtures.js';

async function alpha(png: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await sharp(png).ensureAlpha().extractChannel(3).raw().toBuffer());
}

t.test('both models are assembled and verified by sha256; int8 is the default', async (t) => {
  t.equal(readManifest().default, 'isnet-int8');
  t.equal(modelEntry().name, 'isnet-int8');
  const int8 = modelEntry();
  const fp32 = modelEntry('isnet-fp32');
  t.match(int8.entry.transforms, ['fp16-to-fp32', 'keep-output:output', /^quantize-int8:/]);
  t.match(int8.entry.sha256, /^[0-9a-f]{64}$/, 'a fixed hash: the quantisation is deterministic');
  for (const m of [fp32, int8]) t.ok(fs.existsSync(m.path), `${m.name} assembled at install`);
  t.ok(fs.statSync(int8.path).size < fs.statSync(fp32.path).size / 3, 'int8 weights: under a third of the fp32 file');
});

t.test('int8 and fp32 masks agree on real photos', { skip: EVAL_SKIP }, async (t) => {
  // Two photos of each kind from the dev set: the models must make the same cut, not just similar scores.
  const rows = readEvalManifest().filter((r, i, all) => all.findIndex((o) => o.gt_type === r.gt_type) + 2 > i);
  t.ok(rows.length >= 2);
  const int8 = await createRemover({ workers: 1 });
  const fp32 = await createRemover({ workers: 1, model: 'isnet-fp32' });
  t.teardown(async () => {
    await int8.close();
    await fp32.close();
  });
  for (const row of rows) {
    const bytes = fs.readFileSync(path.join(EVAL_DIR, row.image_path));
    const [a, b] = await Promise.all([int8.remove(bytes, { size: 'full', format: 'png' }), fp32.remove(bytes, { size: 'full', format: 'png' })]);
    t.same([a.width, a.height], [b.width, b.height]);
    const [x, y] = [await alpha(a.data), await alpha(b.data)];
    let inter = 0;
    let union = 0;
    let diff = 0;
    for (let i = 0; i < x.length; i++) {
      const p = x[i]! >= 128;
      const q = y[i]! >= 128;
      if (p && q) inter++;
      if (p || q) union++;
      diff += Math.abs(x[i]! - y[i]!);
    }
    const agreement = union ? inter / union : 1;
    const mae = diff / x.length / 255;
    t.ok(agreement >= 0.95, `${row.id}: int8 vs fp32 mask IoU ${agreement.toFixed(3)} ≥ 0.95`);
    t.ok(mae <= 0.02, `${row.id}: mean |Δalpha| ${mae.toFixed(4)} ≤ 0.02`);
    t.ok(diff > 0, `${row.id}: the two models really are different computations`);
  }
});
