// The composite's scans over alpha (native/src/alpha_scan.h: groups of 32 and 8 pixels, then one at a
// time) find a lone pixel wherever it sits in a row: the foreground box (alpha ≥ 26) and the
// semi-transparent span the colour estimation works in, both from one scan (native/src/alpha_extent.h).
// Every width up to 150 and every position, so each group and stride boundary (16 and
// 64 pixels) and each tail is crossed.
import t from 'tap';
import { loadBinding } from '../../src/native/binding.js';

const binding = loadBinding();
const H = 3;

/** A black w×3 photo, opaque, with the given pixels of row 1 coloured; its mask is 0 but at those pixels. */
function scene(w: number, pixels: Array<{ x: number; rgb: [number, number, number]; mask: number }>): { rgba: Uint8Array; mask: Float32Array } {
  const rgba = new Uint8Array(w * H * 4);
  for (let i = 0; i < w * H; i++) rgba[i * 4 + 3] = 255;
  const mask = new Float32Array(w * H);
  for (const p of pixels) {
    rgba.set(p.rgb, (w + p.x) * 4);
    mask[w + p.x] = p.mask;
  }
  return { rgba, mask };
}

/** One grey pixel at (x, 1) whose mask is 200/255: semi-transparent, above the box's threshold. */
function lone(w: number, x: number): { rgba: Uint8Array; mask: Float32Array } {
  return scene(w, [{ x, rgb: [100, 150, 150], mask: 200 / 255 }]);
}

t.test('a lone pixel is found at every position of every row width', async (t) => {
  let checked = 0;
  for (let w = 1; w <= 150; w++) {
    for (let x = 0; x < w; x++) {
      const { rgba, mask } = lone(w, x);
      // Mask at the photo's size: the bilinear upsample is the identity, so alpha is 200 there, 0 elsewhere.
      const box = binding.compositeMask(rgba, w, H, mask, w, H, { refine: false, decontaminate: true });
      const at = (w + x) * 4;
      const ok =
        box.left === x &&
        box.top === 1 &&
        box.width === 1 &&
        box.height === 1 &&
        rgba[at + 3] === 200 &&
        // Solved against a black background: F = I / alpha, brighter than the photo (a pixel the span
        // missed would keep 100, 150, 150).
        rgba[at]! > 100 &&
        rgba[at + 1]! > 150;
      if (!ok) t.fail(`width ${w}, pixel ${x}: box ${JSON.stringify(box)}, pixel ${Array.from(rgba.subarray(at, at + 4))}`);
      checked++;
    }
  }
  t.equal(checked, (150 * 151) / 2, 'every width and position checked');
});

/**
 * A grey pixel at `sure` whose mask makes it opaque (alpha 255: subject, not semi-transparent) and a
 * bluish one at `faint` whose mask is 10/255 (semi-transparent, under the box's threshold).
 */
function pair(w: number, sure: number, faint: number): { rgba: Uint8Array; mask: Float32Array } {
  return scene(w, [
    { x: sure, rgb: [90, 90, 90], mask: 1 },
    { x: faint, rgb: [100, 150, 150], mask: 10 / 255 },
  ]);
}

t.test('one scan, two boxes: the subject ends where the semi-transparent pixels do not', async (t) => {
  let checked = 0;
  for (let w = 2; w <= 150; w++) {
    for (let sure = 0; sure < w; sure++) {
      for (const faint of new Set([0, (sure + 1) % w, Math.floor(w / 2), w - 1])) {
        if (faint === sure) continue;
        const { rgba, mask } = pair(w, sure, faint);
        const box = binding.compositeMask(rgba, w, H, mask, w, H, { refine: false, decontaminate: true });
        const s = (w + sure) * 4;
        const f = (w + faint) * 4;
        const ok =
          // The box holds the opaque pixel alone: the faint one is under the threshold.
          box.left === sure &&
          box.top === 1 &&
          box.width === 1 &&
          box.height === 1 &&
          // The opaque pixel keeps its colour; the faint one was solved (a pixel the semi-transparent
          // box missed would keep 100, 150, 150).
          rgba[s] === 90 &&
          rgba[s + 1] === 90 &&
          rgba[s + 2] === 90 &&
          rgba[s + 3] === 255 &&
          rgba[f + 3] === 10 &&
          (rgba[f] !== 100 || rgba[f + 1] !== 150 || rgba[f + 2] !== 150);
        if (!ok) t.fail(`width ${w}, opaque ${sure}, faint ${faint}: box ${JSON.stringify(box)}, faint pixel ${Array.from(rgba.subarray(f, f + 4))}`);
        checked++;
      }
    }
  }
  t.ok(checked > 40000, `${checked} layouts checked`);
});

t.test('a faint pixel alone: no box, its colour still estimated', async (t) => {
  for (let w = 1; w <= 70; w++) {
    for (let x = 0; x < w; x++) {
      const { rgba } = lone(w, x);
      const mask = new Float32Array(w * H);
      mask[w + x] = 10 / 255;
      const box = binding.compositeMask(rgba, w, H, mask, w, H, { refine: false, decontaminate: true });
      const at = (w + x) * 4;
      if (box.width !== 0 || box.height !== 0 || rgba[at + 3] !== 10 || (rgba[at] === 100 && rgba[at + 1] === 150 && rgba[at + 2] === 150)) {
        t.fail(`width ${w}, pixel ${x}: box ${JSON.stringify(box)}, pixel ${Array.from(rgba.subarray(at, at + 4))}`);
      }
    }
  }
  t.pass('every width and position');
});
