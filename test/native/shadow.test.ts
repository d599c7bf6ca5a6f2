// Shadows drawn from a cut-out's alpha (native/src/shadow.h, binding.drawShadow) on mattes made here:
// a rectangle, a disc and an L on an RGBA image. Each kind darkens where it belongs and nowhere else
// (the far side of a drop; above the contact line for 3D; above the lowest quarter for car), its
// darkest alpha follows the opacity, the subject's own pixels keep their bytes (opaque) or their
// premultiplied colour (soft edge), and odd inputs (1×1, empty, touching the edge, odd sizes) work.
import t, { type Test } from 'tap';
import { loadBinding } from '../../src/native/binding.js';
import type { ShadowType } from '../../src/domain/removal.js';

const binding = loadBinding();
const KINDS: ShadowType[] = ['drop', '3D', 'car'];
const COLOUR = [200, 60, 40] as const;

interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}
type Shape = (x: number, y: number) => boolean;

/** A w×h RGBA image: COLOUR at alpha 255 where `inside`, transparent black elsewhere. */
function matte(w: number, h: number, inside: Shape): Uint8Array {
  const rgba = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (!inside(x, y)) continue;
      const i = (y * w + x) * 4;
      rgba.set(COLOUR, i);
      rgba[i + 3] = 255;
    }
  }
  return rgba;
}

const rect =
  (r: Rect): Shape =>
  (x, y) =>
    x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;
const disc =
  (cx: number, cy: number, radius: number): Shape =>
  (x, y) =>
    (x - cx) ** 2 + (y - cy) ** 2 < radius ** 2;
const ell =
  (r: Rect, arm: number): Shape =>
  (x, y) =>
    rect(r)(x, y) && (x < r.x0 + arm || y >= r.y1 - arm);

/** The box of alpha 255 (the shapes are solid). */
function solidBox(rgba: Uint8Array, w: number, h: number): Rect {
  const b = { x0: w, y0: h, x1: 0, y1: 0 };
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (rgba[(y * w + x) * 4 + 3] !== 255) continue;
      b.x0 = Math.min(b.x0, x);
      b.x1 = Math.max(b.x1, x + 1);
      b.y0 = Math.min(b.y0, y);
      b.y1 = y + 1;
    }
  }
  return b;
}

/** How many bytes differ (tap's deep compare is far too slow for images), from byte `from` to `to`. */
function changedBytes(a: Uint8Array, b: Uint8Array, from = 0, to = a.length): number {
  let n = a.length === b.length ? 0 : 1;
  for (let i = from; i < to; i++) if (a[i] !== b[i]) n++;
  return n;
}

/** The first row a kind may darken: 3D the lowest opaque row, car the lowest quarter of the subject (under a car's sills). */
function firstRow(type: ShadowType, b: Rect): number {
  return type === '3D' ? b.y1 - 1 : b.y1 - Math.round(0.25 * (b.y1 - b.y0));
}

function drawn(before: Uint8Array, w: number, h: number, type: ShadowType, opacity: number): Uint8Array {
  const after = before.slice();
  binding.drawShadow(after, w, h, { type, opacity });
  return after;
}

/** Alpha of the pixels that were transparent, where `where` holds: the most, and how many are above 0. */
function shadowIn(before: Uint8Array, after: Uint8Array, w: number, h: number, where: (x: number, y: number) => boolean): { max: number; count: number } {
  let max = 0;
  let count = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4;
      if (before[i + 3] !== 0 || !where(x, y)) continue;
      max = Math.max(max, after[i + 3]!);
      if (after[i + 3]! > 0) count++;
    }
  }
  return { max, count };
}

/** What holds for every kind: opaque pixels keep their bytes; the shadow is black and at most the opacity. */
function checkInvariants(t: Test, before: Uint8Array, after: Uint8Array, opacity: number, label: string): void {
  const cap = Math.round(2.55 * opacity);
  let opaqueChanged = 0;
  let notBlack = 0;
  let overCap = 0;
  for (let i = 0; i < before.length; i += 4) {
    if (before[i + 3] === 255) {
      if (after[i] !== before[i] || after[i + 1] !== before[i + 1] || after[i + 2] !== before[i + 2] || after[i + 3] !== 255) opaqueChanged++;
    } else if (before[i + 3] === 0 && after[i + 3]! > 0) {
      if (after[i] !== 0 || after[i + 1] !== 0 || after[i + 2] !== 0) notBlack++;
      if (after[i + 3]! > cap) overCap++;
    }
  }
  t.equal(opaqueChanged, 0, `${label}: opaque subject pixels unchanged`);
  t.equal(notBlack, 0, `${label}: the shadow is black`);
  t.equal(overCap, 0, `${label}: no shadow alpha above ${cap}`);
}

const W = 480;
const H = 360;
const SHAPES: Array<[string, Shape]> = [
  ['rectangle', rect({ x0: 140, y0: 60, x1: 340, y1: 260 })],
  ['disc', disc(240, 160, 90)],
  ['L', ell({ x0: 120, y0: 40, x1: 340, y1: 280 }, 60)],
];

t.test('each kind darkens where it belongs and nowhere else', async (t) => {
  for (const [name, shape] of SHAPES) {
    const before = matte(W, H, shape);
    const b = solidBox(before, W, H);
    const diag = Math.hypot(b.x1 - b.x0, b.y1 - b.y0);
    for (const type of KINDS) {
      const after = drawn(before, W, H, type, 60);
      const label = `${name} ${type}`;
      checkInvariants(t, before, after, 60, label);
      const below = shadowIn(before, after, W, H, (_x, y) => y >= b.y1);
      if (type === 'drop') {
        const margin = 0.05 * diag;
        t.equal(
          shadowIn(before, after, W, H, (x, y) => x < b.x0 - margin || y < b.y0 - margin).count,
          0,
          `${label}: nothing on the far side (left of and above the subject)`,
        );
        t.ok(shadowIn(before, after, W, H, (x) => x >= b.x1).count > 0, `${label}: shadow to the right`);
        t.ok(below.count > 0, `${label}: shadow below`);
      } else {
        const top = firstRow(type, b);
        t.equal(changedBytes(before, after, 0, top * W * 4), 0, `${label}: no byte changed above row ${top}`);
        t.ok(below.count > 0, `${label}: shadow below the contact line`);
        if (type === 'car') {
          // Wider than the lowest quarter's own columns (a disc's chord there, the L's foot).
          const foot = solidBox(before.subarray(top * W * 4), W, b.y1 - top);
          const wider = shadowIn(before, after, W, H, (x, y) => y >= b.y1 && (x < foot.x0 || x >= foot.x1));
          t.ok(wider.count > 0, `${label}: wider than its lowest part`);
        }
      }
    }
  }
});

t.test('the darkest shadow alpha follows the opacity', async (t) => {
  // On the rectangle every kind has a solid part outside the subject: its darkest alpha is within 10%
  // of opacity × 255 / 100, and never above it.
  const before = matte(W, H, SHAPES[0]![1]);
  for (const type of KINDS) {
    for (const opacity of [1, 10, 50, 90, 100]) {
      const cap = Math.round(2.55 * opacity);
      const { max } = shadowIn(before, drawn(before, W, H, type, opacity), W, H, () => true);
      t.ok(max <= cap && max >= Math.floor(0.9 * cap), `${type} at ${opacity}: darkest ${max}, expected ${Math.floor(0.9 * cap)}..${cap}`);
    }
  }
});

t.test('opacity 0 changes no byte', async (t) => {
  for (const [name, shape] of SHAPES) {
    const before = matte(W, H, shape);
    for (const type of KINDS) t.equal(changedBytes(drawn(before, W, H, type, 0), before), 0, `${name} ${type}`);
  }
});

t.test('soft edges keep their premultiplied colour under the shadow', async (t) => {
  // A rectangle with a 6-pixel ramp of alpha on every side; the shadow only adds coverage behind it.
  const w = 300;
  const h = 240;
  const before = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const d = Math.min(x - 80, 220 - x, y - 50, 190 - y);
      if (d < 0) continue;
      const i = (y * w + x) * 4;
      before.set(COLOUR, i);
      before[i + 3] = Math.min(255, 40 + d * 40);
    }
  }
  for (const type of KINDS) {
    const after = drawn(before, w, h, type, 80);
    let bad = 0;
    let darkened = 0;
    for (let i = 0; i < before.length; i += 4) {
      const a = before[i + 3]!;
      if (a === 0 || a === 255) continue;
      const oa = after[i + 3]!;
      if (oa < a) bad++;
      if (oa > a) darkened++;
      for (let c = 0; c < 3; c++) if (Math.abs(after[i + c]! * oa - before[i + c]! * a) > oa) bad++;
    }
    t.equal(bad, 0, `${type}: alpha never drops, colour × alpha kept to rounding`);
    t.ok(darkened > 0, `${type}: some soft-edge pixels have shadow behind them`);
  }
});

t.test('odd inputs', async (t) => {
  for (const type of KINDS) {
    for (const a of [0, 128, 255]) {
      const one = new Uint8Array([10, 20, 30, a]);
      binding.drawShadow(one, 1, 1, { type, opacity: 100 });
      if (a !== 128) t.same([...one], [10, 20, 30, a], `1×1 alpha ${a}, ${type}: unchanged (no subject, or all subject)`);
      else t.ok(one[3]! >= 128 && Math.abs(one[2]! * one[3]! - 30 * 128) <= one[3]!, `1×1 alpha 128, ${type}: coverage only added, ${[...one]}`);
    }
    const empty = new Uint8Array(97 * 53 * 4).map((_, i) => (i % 4 === 3 ? 0 : 77));
    t.equal(changedBytes(drawn(empty, 97, 53, type, 100), empty), 0, `empty matte, ${type}: no shadow`);
    const faint = new Uint8Array(64 * 64 * 4).map((_, i) => (i % 4 === 3 ? 100 : 50));
    t.equal(changedBytes(drawn(faint, 64, 64, type, 100), faint), 0, `no alpha reaches 128, ${type}: no shadow`);
  }
  // A subject touching the bottom edge: 3D and car have no room below it (only their contact rows
  // beside it), the drop still shows at the side.
  const w = 401;
  const h = 257;
  const before = matte(w, h, rect({ x0: 100, y0: 90, x1: 260, y1: h }));
  for (const type of KINDS) {
    const after = drawn(before, w, h, type, 70);
    checkInvariants(t, before, after, 70, `bottom edge ${type}`);
    const side = shadowIn(before, after, w, h, (x) => x >= 260).count;
    if (type === 'drop') t.ok(side > 0, 'bottom edge drop: shadow at the right');
    else
      t.equal(
        changedBytes(before, after, 0, firstRow(type, { x0: 100, y0: 90, x1: 260, y1: h }) * w * 4),
        0,
        `bottom edge ${type}: nothing above its first row`,
      );
  }
  // Odd sizes, a grid of more than one pixel per cell, one-pixel-wide images.
  for (const [ow, oh] of [
    [1031, 777],
    [3, 1001],
    [1001, 3],
    [1, 1],
    [2, 5],
  ] as const) {
    const img = matte(ow, oh, (x, y) => x >= Math.floor(ow / 4) && x < Math.ceil((3 * ow) / 4) && y >= Math.floor(oh / 4) && y < Math.ceil((3 * oh) / 4));
    for (const type of KINDS) checkInvariants(t, img, drawn(img, ow, oh, type, 100), 100, `${ow}×${oh} ${type}`);
  }
});

t.test('arguments', async (t) => {
  const rgba = new Uint8Array(4 * 4 * 4);
  t.throws(() => binding.drawShadow(rgba, 4, 4, { type: 'flat' as ShadowType, opacity: 50 }), {
    code: 'ERR_CUTOUT_ARG',
    message: "Expected 'drop', '3D' or 'car' for options.type but received 'flat'",
  });
  t.throws(() => binding.drawShadow(rgba, 4, 4, { type: 'drop', opacity: 101 }), { code: 'ERR_CUTOUT_ARG', message: /options\.opacity/ });
  t.throws(() => binding.drawShadow(rgba, 4, 4, { type: 'drop', opacity: 2.5 }), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.drawShadow(rgba, 4, 5, { type: 'drop', opacity: 50 }), {
    code: 'ERR_CUTOUT_BAD_LENGTH',
    message: 'Expected 80 bytes (4x5x4) for rgba but received 64',
  });
  t.throws(() => binding.drawShadow(rgba, 4, 4, undefined as unknown as { type: ShadowType; opacity: number }), { code: 'ERR_CUTOUT_ARG' });
});
