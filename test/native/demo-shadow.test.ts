// The demo page draws shadows in the browser (src/web/static/demo-shadow.js) with the addon's steps
// and constants, so that switching the kind costs no request. Both are run here on the same
// cut-outs (hard and soft edges, coloured, a subject on the bottom edge, a photo-sized one whose
// matte cells are 4×4 pixels, a subject thinner than a cell): the page must draw what the service
// would, to a level of alpha at the odd pixel (doubles in JS, floats in C++). Colour is compared as
// it is seen, premultiplied by alpha: a faint pixel's colour turns on a level of alpha.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import type { ShadowType } from '../../src/domain/removal.js';
import { loadBinding } from '../../src/native/binding.js';
import { staticDir } from '../../src/web/routes.js';

type DrawShadow = (rgba: Uint8Array, w: number, h: number, o: { type: string; opacity: number }) => void;

const binding = loadBinding();
const sandbox: { cutoutShadow?: { drawShadow: DrawShadow } } = {};
runInNewContext(readFileSync(join(staticDir(), 'demo-shadow.js'), 'utf8'), sandbox);
const pageDraw = sandbox.cutoutShadow!.drawShadow;

/** A w×h cut-out: alpha from `alpha(x, y)` (0..255), a colour that varies across it. */
function cutout(w: number, h: number, alpha: (x: number, y: number) => number): Uint8Array {
  const rgba = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const a = Math.max(0, Math.min(255, Math.round(alpha(x, y))));
      if (a === 0) continue;
      rgba.set([(x * 7) & 255, (y * 5) & 255, 120, a], (y * w + x) * 4);
    }
  }
  return rgba;
}

/** 255 inside, 0 outside, a linear ramp `soft` pixels wide across the edge (a matte's soft border). */
const softDisc = (cx: number, cy: number, r: number, soft: number) => (x: number, y: number) => (255 * (r - Math.hypot(x - cx, y - cy))) / soft + 127.5;
const box = (x0: number, y0: number, x1: number, y1: number) => (x: number, y: number) => (x >= x0 && x < x1 && y >= y0 && y < y1 ? 255 : 0);

/** Name, size, matte, and whether a ground shadow (3D, car) has room below the subject to show. */
const CASES: Array<[string, number, number, (x: number, y: number) => number, boolean]> = [
  ['hard rectangle', 480, 360, box(140, 60, 340, 260), true],
  ['soft disc', 480, 360, softDisc(240, 160, 90, 12), true],
  ['L on the bottom edge', 400, 300, (x, y) => (box(100, 40, 300, 300)(x, y) && (x < 160 || y >= 240) ? 255 : 0), false],
  ['photo-sized soft figure (4×4-pixel cells)', 1500, 1000, (x, y) => Math.max(softDisc(750, 380, 260, 20)(x, y), box(560, 560, 940, 900)(x, y)), true],
  ['a one-pixel line (thinner than a cell)', 1200, 200, box(100, 150, 1100, 151), false],
  ['half transparent only (no subject)', 200, 200, (x, y) => (box(50, 50, 150, 150)(x, y) ? 100 : 0), false],
];

/** Per pixel: alpha apart, and the largest gap of a colour channel premultiplied by its alpha. */
function gaps(a: Uint8Array, b: Uint8Array, i: number): number {
  let worst = Math.abs(a[i + 3]! - b[i + 3]!);
  for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(a[i + c]! * a[i + 3]! - b[i + c]! * b[i + 3]!) / 255);
  return worst;
}

for (const [name, w, h, alpha, roomBelow] of CASES) {
  t.test(name, async (t) => {
    const before = cutout(w, h, alpha);
    for (const type of ['drop', '3D', 'car'] as ShadowType[]) {
      for (const opacity of [0, 1, 50, 100]) {
        const native = before.slice();
        binding.drawShadow(native, w, h, { type, opacity });
        const page = before.slice();
        pageDraw(page, w, h, { type, opacity });
        let shaded = 0;
        let differing = 0;
        let worst = 0;
        for (let i = 0; i < native.length; i += 4) {
          if (native[i + 3] !== before[i + 3] || native[i] !== before[i]) shaded++;
          const d = gaps(native, page, i);
          if (d > 0) differing++;
          worst = Math.max(worst, d);
        }
        const label = `${type} at ${opacity}: ${shaded} pixels shaded, ${differing} differ, worst by ${worst.toFixed(2)}`;
        if (opacity === 0 || name.startsWith('half')) {
          t.equal(shaded + differing, 0, `${label}: nothing drawn by either`);
          continue;
        }
        if (opacity >= 50 && (type === 'drop' || roomBelow)) t.ok(shaded > 1000, `${label}: a shadow was drawn`);
        t.ok(worst <= 1.5, `${label}: within one level and a half`);
        t.ok(differing <= Math.max(8, shaded / 1000), `${label}: at most one pixel in a thousand off`);
      }
    }
  });
}

t.test('a kind the page does not know is refused, as the addon refuses it', async (t) => {
  const rgba = cutout(40, 40, box(10, 10, 30, 30));
  t.throws(() => pageDraw(rgba, 40, 40, { type: 'sideways', opacity: 50 }), /Expected 'drop', '3D' or 'car'/);
  t.throws(() => binding.drawShadow(rgba, 40, 40, { type: 'sideways' as never, opacity: 50 }), /Expected 'drop', '3D' or 'car'/);
});
