// Size tiers, ROI, crop and placement arithmetic follow remove.bg's rules.
import t from 'tap';
import { atInputResolution, cropRect, outputSize, placeSubject, roiToOutput } from '../../src/worker/geometry.js';
import { TIER_MAX_PIXELS } from '../../src/domain/removal.js';

t.test('output size per tier keeps the aspect ratio and never upscales', async (t) => {
  const photo = { width: 4000, height: 3000 };
  t.same(outputSize(photo, 'preview'), { width: 577, height: 433 });
  for (const tier of ['preview', 'medium', 'hd', 'full', '50MP'] as const) {
    const o = outputSize(photo, tier);
    t.ok(o.width * o.height <= TIER_MAX_PIXELS[tier], `${tier} within cap`);
    t.ok(Math.abs(o.width / o.height - 4 / 3) < 0.01, `${tier} aspect kept`);
  }
  t.same(outputSize(photo, 'full'), photo, '12 MP stays 12 MP at full');
  t.same(outputSize({ width: 400, height: 300 }, 'hd'), { width: 400, height: 300 }, 'never upscaled');
  t.same(outputSize({ width: 625, height: 400 }, 'preview'), { width: 625, height: 400 }, "remove.bg's own example fits exactly");
  const tall = outputSize({ width: 1, height: 1_000_000 }, 'preview');
  t.ok(tall.width >= 1 && tall.width * tall.height <= 250_000, 'extreme aspect stays within cap');
});

t.test('roi maps to output pixels and is validated', async (t) => {
  const pct = (v: number) => ({ value: v, unit: '%' as const });
  const px = (v: number) => ({ value: v, unit: 'px' as const });
  t.same(roiToOutput({ x1: px(0), y1: px(0), x2: pct(100), y2: pct(100) }, { width: 800, height: 600 }, { width: 400, height: 300 }), {
    ok: true,
    rect: [0, 0, 400, 300],
  });
  t.same(roiToOutput({ x1: px(100), y1: px(50), x2: px(300), y2: px(250) }, { width: 800, height: 600 }, { width: 400, height: 300 }), {
    ok: true,
    rect: [50, 25, 150, 125],
  });
  t.same(roiToOutput({ x1: px(0), y1: px(0), x2: px(900), y2: px(10) }, { width: 800, height: 600 }, { width: 800, height: 600 }), {
    ok: false,
    code: 'roi_exceeds_bounds',
  });
  t.same(roiToOutput({ x1: px(10), y1: px(0), x2: px(10), y2: px(10) }, { width: 800, height: 600 }, { width: 800, height: 600 }), {
    ok: false,
    code: 'roi_region_empty',
  });
});

t.test('crop margins are clamped to 50% of the subject and 500 px', async (t) => {
  const subject = { top: 100, left: 200, width: 300, height: 400 };
  t.same(cropRect(subject, undefined), subject);
  const all = (v: number, unit: 'px' | '%') => ({ top: { value: v, unit }, right: { value: v, unit }, bottom: { value: v, unit }, left: { value: v, unit } });
  t.same(cropRect(subject, all(10, 'px')), { top: 90, left: 190, width: 320, height: 420 });
  t.same(cropRect(subject, all(10, '%')), { top: 60, left: 170, width: 360, height: 480 });
  t.same(cropRect(subject, all(1000, 'px')), { top: -100, left: 50, width: 600, height: 800 }, '50% of 300 wide = 150, of 400 high = 200');
});

t.test('scale fits the subject inside the canvas fraction; position places it in the free space', async (t) => {
  const subject = { top: 10, left: 10, width: 100, height: 50 };
  const canvas = { width: 400, height: 400 };
  t.same(placeSubject(subject, canvas, 0.5, undefined), { left: 100, top: 150, width: 200, height: 100 }, 'scale implies centre');
  t.same(placeSubject(subject, canvas, undefined, { x: 0, y: 100 }), { left: 0, top: 350, width: 100, height: 50 });
  t.same(placeSubject(subject, canvas, undefined, undefined), subject, 'original stays');
});

t.test('the foreground box at the input resolution (remove.bg: "expressed with respect to the input image resolution")', async (t) => {
  const box = { top: 10, left: 20, width: 300, height: 200 };
  t.equal(atInputResolution(box, { width: 800, height: 600 }, { width: 800, height: 600 }), box, 'not downscaled: the result pixels as they are');
  t.same(
    atInputResolution(box, { width: 4000, height: 3000 }, outputSize({ width: 4000, height: 3000 }, 'preview')),
    {
      top: Math.round((10 * 3000) / 433),
      left: Math.round((20 * 4000) / 577),
      width: Math.round((300 * 4000) / 577),
      height: Math.round((200 * 3000) / 433),
    },
    'downscaled to 577x433: each axis times input ÷ output',
  );
  t.same(
    atInputResolution({ top: 0, left: 0, width: 0, height: 0 }, { width: 4000, height: 3000 }, { width: 577, height: 433 }),
    { top: 0, left: 0, width: 0, height: 0 },
    'no subject stays empty',
  );
});
