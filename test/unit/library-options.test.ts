// The library's option check (src/lib/check-options.ts): every RemoveOptions field a JavaScript caller
// can get wrong is refused with a TypeError naming it, at the domain's limits, before any worker runs.
// (Before it, size 'auto' reached the worker and came back as internal_error "… received NaN".)
import t from 'tap';
import { checkRemoveOptions } from '../../src/lib/check-options.js';
import { DEFAULT_OPTIONS, type RemoveOptions } from '../../src/domain/removal.js';

const px = (value: number) => ({ value, unit: 'px' as const });
const pct = (value: number) => ({ value, unit: '%' as const });
const margins = (l: { value: number; unit: 'px' | '%' }) => ({ top: l, right: l, bottom: l, left: l });

t.test('valid options pass, at their limits', async (t) => {
  const full: RemoveOptions = {
    ...DEFAULT_OPTIONS,
    size: '50MP',
    format: 'zip',
    channels: 'alpha',
    bgColor: [0, 128, 255, 255],
    bgImage: new Uint8Array(8),
    crop: true,
    cropMargin: { top: px(500), right: pct(50), bottom: px(0), left: pct(0) },
    scale: 0.1,
    position: { x: 0, y: 100 },
    roi: { x1: px(0), y1: pct(0), x2: px(10.5), y2: pct(100) },
    quality: 'best',
    shadow: { type: '3D', opacity: 100 },
  };
  t.doesNotThrow(() => checkRemoveOptions(full), 'every field set');
  t.doesNotThrow(() => checkRemoveOptions({}), 'none set');
  for (const size of ['preview', 'medium', 'hd', 'full', '50MP'] as const) t.doesNotThrow(() => checkRemoveOptions({ size }), size);
  t.doesNotThrow(() => checkRemoveOptions({ scale: 1, cropMargin: margins(px(500)) }), 'scale 1, margins of 500 px');
  for (const type of ['drop', '3D', 'car'] as const) t.doesNotThrow(() => checkRemoveOptions({ shadow: { type, opacity: 1 } }), `shadow ${type}`);
});

const BAD: Array<[string, Record<string, unknown>, RegExp]> = [
  ['size auto', { size: 'auto' }, /^Expected one of preview, medium, hd, full, 50MP for size but received auto of type string$/],
  ['size 4k (an HTTP alias)', { size: '4k' }, /for size but received 4k/],
  ['format gif', { format: 'gif' }, /^Expected one of auto, png, jpg, webp, zip for format but received gif of type string$/],
  ['channels rgb', { channels: 'rgb' }, /^Expected one of rgba, alpha for channels but received rgb/],
  ['crop as a string', { crop: 'true' }, /^Expected a boolean for crop but received true of type string$/],
  ['bgColor with 3 values', { bgColor: [1, 2, 3] }, /^Expected \[r, g, b, a\] with integers from 0 to 255 for bgColor but received \[1,2,3\] of type object$/],
  ['bgColor over 255', { bgColor: [0, 0, 0, 256] }, /for bgColor/],
  ['bgColor fractional', { bgColor: [0, 0, 0.5, 255] }, /for bgColor/],
  ['bgColor as hex text', { bgColor: 'ff0000' }, /for bgColor but received ff0000 of type string/],
  ['bgImage as text', { bgImage: 'bg.png' }, /^Expected a Uint8Array or Buffer for bgImage but received bg.png of type string$/],
  ['cropMargin 501 px', { cropMargin: margins(px(501)) }, /for cropMargin/],
  ['cropMargin 51 %', { cropMargin: margins(pct(51)) }, /for cropMargin/],
  ['cropMargin fractional px', { cropMargin: margins(px(1.5)) }, /for cropMargin/],
  ['cropMargin negative', { cropMargin: margins(px(-1)) }, /for cropMargin/],
  ['cropMargin missing a side', { cropMargin: { top: px(1), right: px(1), bottom: px(1) } }, /for cropMargin/],
  ['cropMargin as CSS text', { cropMargin: '10px' }, /for cropMargin but received 10px of type string/],
  ['scale under 0.1', { scale: 0.09 }, /^Expected a number from 0.1 to 1 for scale but received 0.09 of type number$/],
  ['scale as a percentage', { scale: 50 }, /for scale/],
  ['scale NaN', { scale: NaN }, /for scale but received NaN/],
  [
    'position over 100',
    { position: { x: 101, y: 0 } },
    /^Expected \{ x, y \} percentages from 0 to 100 for position but received \{"x":101,"y":0\} of type object$/,
  ],
  ['position without y', { position: { x: 5 } }, /for position/],
  ['roi over 100 %', { roi: { x1: pct(0), y1: pct(0), x2: pct(101), y2: pct(100) } }, /for roi/],
  ['roi with a bad unit', { roi: { x1: { value: 0, unit: 'em' }, y1: px(0), x2: px(1), y2: px(1) } }, /for roi/],
  ['roi as text', { roi: '0 0 100% 100%' }, /for roi but received 0 0 100% 100% of type string/],
  ['quality ultra', { quality: 'ultra' }, /^Expected one of fast, balanced, best for quality but received ultra/],
  ['refine as 1', { refine: 1 }, /^Expected a boolean for refine but received 1 of type number$/],
  [
    'shadow kind 3d (the HTTP spelling)',
    { shadow: { type: '3d', opacity: 50 } },
    /^Expected \{ type: drop \| 3D \| car, opacity: a number from 1 to 100 \} for shadow but received \{"type":"3d","opacity":50\} of type object$/,
  ],
  ['shadow opacity 0', { shadow: { type: 'drop', opacity: 0 } }, /for shadow/],
  ['shadow opacity 101', { shadow: { type: 'drop', opacity: 101 } }, /for shadow/],
  ['shadow without opacity', { shadow: { type: 'car' } }, /for shadow/],
  ['shadow as text', { shadow: 'drop' }, /for shadow but received drop of type string/],
];

t.test('each bad value is refused with a TypeError naming the option', async (t) => {
  for (const [what, options, message] of BAD) {
    t.throws(() => checkRemoveOptions(options as never), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message }, what);
  }
});

t.test('a long value is cut in the message', async (t) => {
  t.throws(() => checkRemoveOptions({ format: 'x'.repeat(500) } as never), { message: /received x{60}… of type string$/ });
});
