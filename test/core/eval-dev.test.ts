// The default pipeline at full size over the whole dev set reaches the peer's quality with the same
// weights: mean IoU ≥ 0.76 on the binary-mask items and mean whole-image alpha MAE ≤ 0.10 on the matte items.
// Both shipped models are held to it: the int8 default and the fp32 model it is quantised from.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import sharp from 'sharp';
import { createRemover } from '../../src/lib/remove.js';
import { EVAL_DIR, EVAL_SKIP, readManifest } from '../helpers/core-fixtures.js';

async function alphaOf(png: Uint8Array, width: number, height: number): Promise<Float32Array> {
  const raw = await sharp(png).ensureAlpha().extractChannel(3).resize(width, height, { fit: 'fill' }).raw().toBuffer();
  return Float32Array.from(raw, (v) => v / 255);
}

async function truthOf(file: string): Promise<{ gt: Float32Array; width: number; height: number }> {
  const { data, info } = await sharp(file).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { gt: Float32Array.from(data, (v) => v / 255), width: info.width, height: info.height };
}

async function evaluate(t: Test, model: string): Promise<void> {
  const remover = await createRemover({ workers: 1, model });
  t.teardown(() => remover.close());
  const iou: Record<string, number[]> = {};
  const mae: Record<string, number[]> = {};
  await t.test('every dev item', async (t) => {
    for (const row of rows) {
      const { gt, width, height } = await truthOf(path.join(EVAL_DIR, row.gt_path));
      const out = await remover.remove(fs.readFileSync(path.join(EVAL_DIR, row.image_path)), { size: 'full', format: 'png' });
      t.same([out.width, out.height], [width, height], `${row.id}: full size equals the ground truth's size`);
      const alpha = await alphaOf(out.data, width, height);
      if (row.gt_type === 'binary_mask') {
        let inter = 0;
        let union = 0;
        for (let i = 0; i < gt.length; i++) {
          const p = alpha[i]! >= 0.5;
          const g = gt[i]! >= 0.5;
          if (p && g) inter++;
          if (p || g) union++;
        }
        (iou[row.category] ??= []).push(union === 0 ? 1 : inter / union);
      } else {
        let sum = 0;
        for (let i = 0; i < gt.length; i++) sum += Math.abs(alpha[i]! - gt[i]!);
        (mae[row.category] ??= []).push(sum / gt.length);
      }
    }
  });

  await t.test('DAVIS binary masks: mean IoU ≥ 0.76', async (t) => {
    const all = Object.values(iou).flat();
    t.equal(all.length, rows.filter((r) => r.gt_type === 'binary_mask').length);
    for (const [cat, v] of Object.entries(iou)) t.comment(`IoU ${cat}: ${mean(v).toFixed(3)} (${v.length})`);
    t.comment(`IoU overall: ${mean(all).toFixed(4)}`);
    t.ok(mean(all) >= 0.76, `mean IoU ${mean(all).toFixed(4)}`);
  });

  await t.test('alphamatting mattes: mean whole-image MAE ≤ 0.10', async (t) => {
    const all = Object.values(mae).flat();
    t.equal(all.length, rows.filter((r) => r.gt_type === 'alpha_matte').length);
    for (const [cat, v] of Object.entries(mae)) t.comment(`MAE ${cat}: ${mean(v).toFixed(4)} (${v.length})`);
    t.comment(`MAE overall: ${mean(all).toFixed(4)}`);
    t.ok(mean(all) <= 0.1, `mean MAE ${mean(all).toFixed(4)}`);
  });
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const rows = EVAL_SKIP ? [] : readManifest();

t.test('isnet-int8 (default)', { skip: EVAL_SKIP }, (t) => evaluate(t, 'isnet-int8'));
t.test('isnet-fp32', { skip: EVAL_SKIP }, (t) => evaluate(t, 'isnet-fp32'));
