// The composite's scans over alpha (native/src/alpha_scan.h: groups of 32 and 8 pixels, then one at a
// time) find a lone pixel wherever it sits in a row: the foreground box (alpha ≥ 26) and the
// semi-transparent span the colour estimation works in. Every width up to 70 and every position, so
// each group boundary and each tail is crossed.
import t from 'tap';
import { loadBinding } from '../../src/native/binding.js';

const binding = loadBinding();
const H = 3;

/** A black w×3 photo with one grey pixel at (x, 1) whose mask is 200/255: semi-transparent, above the box's threshold. */
function lone(w: number, x: number): { rgba: Uint8Array; mask: Float32Array } {
  const rgba = new Uint8Array(w * H * 4);
  for (let i = 0; i < w * H; i++) rgba[i * 4 + 3] = 255;
  const at = (w + x) * 4;
  rgba.set([100, 150, 150], at);
  const mask = new Float32Array(w * H);
  mask[w + x] = 200 / 255;
  return { rgba, mask };
}

t.test('a lone pixel is found at every position of every row width', async (t) => {
  let checked = 0;
  for (let w = 1; w <= 70; w++) {
    for (let x = 0; x < w; x++) {
      const { rgba, mask } = lone(w, x);
      // Mask at the photo's size: the bilinear upsample is the identity, so alpha is 200 there, 0 elsewhere.
      const box = binding.compositeMask(rgba, w, H, mask, w, H, { refine: false, decontaminate: true });
      const at = (w + x) * 4;
      const ok =
        box.left === x && box.top === 1 && box.width === 1 && box.height === 1 &&
        rgba[at + 3] === 200 &&
        // Solved against a black background: F = I / alpha, brighter than the photo (a pixel the span
        // missed would keep 100, 150, 150).
        rgba[at]! > 100 && rgba[at + 1]! > 150;
      if (!ok) t.fail(`width ${w}, pixel ${x}: box ${JSON.stringify(box)}, pixel ${Array.from(rgba.subarray(at, at + 4))}`);
      checked++;
    }
  }
  t.equal(checked, (70 * 71) / 2, 'every width and position checked');
});
