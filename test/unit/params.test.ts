// api/params/: every remove.bg field, alias and per-parameter error code, without a server.
import t from 'tap';
import { ApiError } from '../../src/api/errors.js';
import { wantsJson } from '../../src/api/params/accept.js';
import { parseBgColor } from '../../src/api/params/color.js';
import { parseCropMargin, parseLength, parsePosition, parseRoi, parseScale } from '../../src/api/params/layout.js';
import { parseRemoveRequest } from '../../src/api/params/remove-request.js';
import type { RawValue } from '../../src/http/fields.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
const withImage = (extra: Record<string, RawValue> = {}) => new Map<string, RawValue>([['image_file', { kind: 'file', data: PNG }], ...Object.entries(extra)]);

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  return undefined;
}

t.test('defaults match remove.bg', async (t) => {
  const r = parseRemoveRequest(withImage());
  t.equal(r.size, 'preview');
  t.equal(r.options.format, 'auto');
  t.equal(r.options.channels, 'rgba');
  t.equal(r.options.crop, false);
  t.equal(r.options.bgColor, undefined);
  t.same(Object.keys(r).sort(), ['options', 'size', 'source'], 'nothing else: the compatibility fields are checked, never carried');
  t.notOk('shadow' in r.options, 'no shadow unless asked for');
});

t.test('size values and aliases', async (t) => {
  const cases: Record<string, string> = {
    preview: 'preview',
    small: 'preview',
    regular: 'preview',
    medium: 'medium',
    hd: 'hd',
    full: 'full',
    '4k': 'full',
    '4K': 'full',
    '50MP': '50MP',
    '50mp': '50MP',
    auto: 'auto',
    Preview: 'preview',
  };
  for (const [input, want] of Object.entries(cases)) t.equal(parseRemoveRequest(withImage({ size: input })).size, want, input);
  t.equal(
    code(() => parseRemoveRequest(withImage({ size: 'huge' }))),
    'invalid_size',
  );
  t.equal(
    code(() => parseRemoveRequest(withImage({ size: '25MP' }))),
    'invalid_size',
  );
});

t.test('invalid parameter title', async (t) => {
  try {
    parseRemoveRequest(withImage({ size: 'huge' }));
    t.fail('no throw');
  } catch (err) {
    t.equal((err as ApiError).status, 400);
    t.equal((err as ApiError).title, "Invalid value for parameter 'size'");
    t.match((err as ApiError).detail, /huge/);
  }
});

t.test('format, channels', async (t) => {
  for (const f of ['auto', 'png', 'jpg', 'webp', 'zip']) t.equal(parseRemoveRequest(withImage({ format: f })).options.format, f);
  t.equal(
    code(() => parseRemoveRequest(withImage({ format: 'gif' }))),
    'invalid_format',
  );
  t.equal(parseRemoveRequest(withImage({ channels: 'alpha' })).options.channels, 'alpha');
  t.equal(
    code(() => parseRemoveRequest(withImage({ channels: 'rgb' }))),
    'invalid_channels',
  );
});

t.test('empty strings and null mean not given', async (t) => {
  const blanks = [
    'size',
    'format',
    'type',
    'type_level',
    'roi',
    'crop',
    'crop_margin',
    'scale',
    'position',
    'channels',
    'bg_color',
    'add_shadow',
    'semitransparency',
    'image_url',
    'image_file_b64',
    'bg_image_url',
  ];
  const r = parseRemoveRequest(withImage(Object.fromEntries(blanks.map((b) => [b, '']))));
  t.equal(r.size, 'preview');
  t.equal(r.source.kind, 'bytes');
  const n = parseRemoveRequest(withImage(Object.fromEntries(blanks.map((b) => [b, null]))));
  t.equal(n.options.crop, false);
});

t.test('booleans: strings, JSON booleans, 1/0', async (t) => {
  t.equal(parseRemoveRequest(withImage({ crop: 'true' })).options.crop, true);
  t.equal(parseRemoveRequest(withImage({ crop: 'TRUE' })).options.crop, true);
  t.equal(parseRemoveRequest(withImage({ crop: true })).options.crop, true);
  t.equal(parseRemoveRequest(withImage({ crop: false })).options.crop, false);
  t.equal(parseRemoveRequest(withImage({ crop: '1' })).options.crop, true);
  t.doesNotThrow(() => parseRemoveRequest(withImage({ semitransparency: 'false' })));
  t.equal(
    code(() => parseRemoveRequest(withImage({ crop: 'yes please' }))),
    'invalid_crop',
  );
  t.equal(
    code(() => parseRemoveRequest(withImage({ semitransparency: 'maybe' }))),
    'invalid_semitransparency',
  );
  t.equal(
    code(() => parseRemoveRequest(withImage({ add_shadow: 'x' }))),
    'invalid_add_shadow',
  );
});

t.test('bg_color', async (t) => {
  t.same(parseBgColor('81d4fa'), [0x81, 0xd4, 0xfa, 255]);
  t.same(parseBgColor('#81d4fa'), [0x81, 0xd4, 0xfa, 255]);
  t.same(parseBgColor('fff'), [255, 255, 255, 255]);
  t.same(parseBgColor('f008'), [255, 0, 0, 0x88]);
  t.same(parseBgColor('81d4fa77'), [0x81, 0xd4, 0xfa, 0x77]);
  t.same(parseBgColor('00000000'), [0, 0, 0, 0]);
  t.same(parseBgColor('green'), [0, 128, 0, 255]);
  t.same(parseBgColor('RebeccaPurple'), [0x66, 0x33, 0x99, 255]);
  t.same(parseBgColor('ABCDEF'), [0xab, 0xcd, 0xef, 255]);
  for (const bad of ['12345', 'ggg', '#', 'notacolour', '1234567', '#12']) {
    t.equal(
      code(() => parseBgColor(bad)),
      'invalid_bg_color',
      bad,
    );
  }
});

t.test('crop_margin', async (t) => {
  const m = parseCropMargin('10px');
  t.same(m.top, { value: 10, unit: 'px' });
  t.same(m.left, { value: 10, unit: 'px' });
  const two = parseCropMargin('10px 20%');
  t.same(
    [two.top, two.right, two.bottom, two.left].map((l) => `${l.value}${l.unit}`),
    ['10px', '20%', '10px', '20%'],
  );
  const four = parseCropMargin('1px 2px 3px 4px');
  t.same(
    [four.top, four.right, four.bottom, four.left].map((l) => l.value),
    [1, 2, 3, 4],
  );
  t.same(parseCropMargin('0').top, { value: 0, unit: 'px' });
  t.same(parseCropMargin('500px').top.value, 500);
  t.same(parseCropMargin('50%').top.value, 50);
  for (const bad of ['501px', '51%', '1px 2px 3px', '10', '-1px', 'a', '1px 2px 3px 4px 5px']) {
    t.equal(
      code(() => parseCropMargin(bad)),
      'invalid_crop_margin',
      bad,
    );
  }
  // only applies with crop=true, but is validated either way
  t.equal(parseRemoveRequest(withImage({ crop_margin: '10px' })).options.cropMargin, undefined);
  t.ok(parseRemoveRequest(withImage({ crop: 'true', crop_margin: '10px' })).options.cropMargin);
  t.equal(
    code(() => parseRemoveRequest(withImage({ crop_margin: '900px' }))),
    'invalid_crop_margin',
  );
});

t.test('scale', async (t) => {
  t.equal(parseScale('original'), undefined);
  t.equal(parseScale('10%'), 0.1);
  t.equal(parseScale('100%'), 1);
  t.equal(parseScale('55.5%'), 0.555);
  for (const bad of ['9%', '101%', '50', 'half', '0%'])
    t.equal(
      code(() => parseScale(bad)),
      'invalid_scale',
      bad,
    );
});

t.test('position', async (t) => {
  t.equal(parsePosition('original'), undefined);
  t.same(parsePosition('center'), { x: 50, y: 50 });
  t.same(parsePosition('20%'), { x: 20, y: 20 });
  t.same(parsePosition('0% 100%'), { x: 0, y: 100 });
  for (const bad of ['left', '101%', '10px', '1% 2% 3%', '-5%'])
    t.equal(
      code(() => parsePosition(bad)),
      'invalid_position',
      bad,
    );
});

t.test('roi', async (t) => {
  const r = parseRoi('0% 0% 100% 100%');
  t.same(r.x2, { value: 100, unit: '%' });
  t.same(parseRoi('0 0 100% 100%').x1, { value: 0, unit: 'px' }); // PyPI removebg client
  t.same(parseRoi('10px 20px 300px 400px').y2, { value: 400, unit: 'px' });
  for (const bad of ['0 0 100%', '10 10 100% 100%', '0% 0% 101% 100%', 'a b c d'])
    t.equal(
      code(() => parseRoi(bad)),
      'invalid_roi',
      bad,
    );
  t.equal(
    code(() => parseRoi('50% 0% 10% 100%')),
    'roi_region_empty',
  );
  t.equal(
    code(() => parseRemoveRequest(withImage({ roi: 'nope' }))),
    'invalid_roi',
  );
});

t.test('type, type_level, shadows: validated; only the shadow fields change the options (test/unit/shadow.test.ts)', async (t) => {
  for (const ty of ['auto', 'person', 'product', 'car', 'animal', 'graphic', 'transportation']) {
    t.doesNotThrow(() => parseRemoveRequest(withImage({ type: ty })), ty);
  }
  t.equal(
    code(() => parseRemoveRequest(withImage({ type: 'dog' }))),
    'invalid_type',
  );
  for (const l of ['none', '1', '2', 'latest', 2] as const) t.doesNotThrow(() => parseRemoveRequest(withImage({ type_level: l })), String(l));
  t.equal(
    code(() => parseRemoveRequest(withImage({ type_level: '3' }))),
    'invalid_type_level',
  );
  for (const s of ['car', '3D', '3d', 'drop', 'none', 'auto']) t.doesNotThrow(() => parseRemoveRequest(withImage({ shadow_type: s })), s);
  t.equal(
    code(() => parseRemoveRequest(withImage({ shadow_type: 'long' }))),
    'invalid_shadow_type',
  );
  t.ok(parseRemoveRequest(withImage({ 'shadow_type[car]': 'car', 'shadow_opacity[car]': '90' })));
  t.ok(parseRemoveRequest(withImage({ shadow_type: { product: 'drop' }, shadow_opacity: { person: 50 } })));
  t.equal(
    code(() => parseRemoveRequest(withImage({ 'shadow_type[car]': 'sideways' }))),
    'invalid_shadow_type',
  );
  t.equal(
    code(() => parseRemoveRequest(withImage({ 'shadow_type[spaceship]': 'car' }))),
    'invalid_shadow_type',
  );
  t.doesNotThrow(() => parseRemoveRequest(withImage({ shadow_opacity: 'auto' })));
  t.doesNotThrow(() => parseRemoveRequest(withImage({ shadow_opacity: 0 })));
  t.equal(
    code(() => parseRemoveRequest(withImage({ shadow_opacity: '101' }))),
    'invalid_shadow_opacity',
  );
  t.equal(
    code(() => parseRemoveRequest(withImage({ 'shadow_opacity[car]': '-1' }))),
    'invalid_shadow_opacity',
  );
  t.ok(parseRemoveRequest(withImage({ shadow_method: 'legacy' })));
  t.equal(
    code(() => parseRemoveRequest(withImage({ shadow_method: 'fancy' }))),
    'invalid_shadow_method',
  );
  t.doesNotThrow(() => parseRemoveRequest(withImage({ add_shadow: 'true' })));
  const rest = parseRemoveRequest(withImage({ type: 'car', type_level: '2', semitransparency: false, shadow_method: 'latest' }));
  t.same(rest, parseRemoveRequest(withImage()), 'the same request as without them');
  const all = parseRemoveRequest(
    withImage({ type: 'car', type_level: '2', semitransparency: false, add_shadow: true, shadow_type: 'drop', shadow_opacity: 40, shadow_method: 'latest' }),
  );
  t.same(
    all,
    { ...parseRemoveRequest(withImage()), options: { ...parseRemoveRequest(withImage()).options, shadow: { type: 'car', opacity: 40 } } },
    'add_shadow is shadow_type[car]=car',
  );
});

t.test('sources', async (t) => {
  t.equal(
    code(() => parseRemoveRequest(new Map())),
    'missing_source',
  );
  t.equal(
    code(() => parseRemoveRequest(new Map([['image_file_b64', '']]))),
    'missing_source',
  );
  for (const notText of [5, 0, true, false]) {
    t.throws(
      () => parseRemoveRequest(new Map<string, RawValue>([['image_file_b64', notText]])),
      {
        code: 'invalid_image_file_b64',
        detail: `Expected a string (the image in base64) for image_file_b64 but received ${notText} of type ${typeof notText}`,
      },
      `JSON ${notText}: a type mistake, not "an empty file"`,
    );
  }
  t.equal(
    code(() => parseRemoveRequest(withImage({ image_url: 'https://example.com/a.jpg' }))),
    'multiple_sources',
  );
  t.equal(
    code(() =>
      parseRemoveRequest(
        new Map<string, RawValue>([
          ['image_file_b64', 'aGk='],
          ['image_url', 'https://e.com/x'],
        ]),
      ),
    ),
    'multiple_sources',
  );
  const b64 = parseRemoveRequest(new Map([['image_file_b64', Buffer.from(PNG).toString('base64')]]));
  t.same(b64.source.kind === 'bytes' && [...b64.source.data], [...PNG]);
  // '+' lost to form decoding becomes ' ', and data: URLs are tolerated
  const bytes = [0, 0, 0, 0xfb, 0xef, 0xbe, 0, 0, 0]; // "AAAA++++AAAA"
  const withPlus = Buffer.from(bytes).toString('base64');
  t.match(withPlus, /^[^+]+\+.*[^+]$/);
  const fixed = parseRemoveRequest(new Map([['image_file_b64', withPlus.replace(/\+/g, ' ')]]));
  t.same(fixed.source.kind === 'bytes' && [...fixed.source.data], bytes);
  const dataUrl = parseRemoveRequest(new Map([['image_file_b64', `data:image/png;base64,${Buffer.from(PNG).toString('base64')}`]]));
  t.same(dataUrl.source.kind === 'bytes' && [...dataUrl.source.data], [...PNG]);
  const url = parseRemoveRequest(new Map([['image_url', 'https://example.com/a.jpg']]));
  t.equal(url.source.kind === 'url' && url.source.url.href, 'https://example.com/a.jpg');
  t.equal(
    code(() => parseRemoveRequest(new Map([['image_url', 'ftp://example.com/a.jpg']]))),
    'invalid_image_url',
  );
  t.equal(
    code(() => parseRemoveRequest(new Map([['image_url', 'not a url']]))),
    'invalid_image_url',
  );
  t.equal(
    code(() => parseRemoveRequest(new Map([['image_file', 'just text']]))),
    'invalid_image_file',
  );
});

t.test('background sources', async (t) => {
  t.equal(
    code(() => parseRemoveRequest(withImage({ bg_color: 'fff', bg_image_url: 'https://e.com/b.jpg' }))),
    'multiple_bg_sources',
  );
  t.equal(
    code(() => parseRemoveRequest(withImage({ bg_color: 'fff', bg_image_file: { kind: 'file', data: PNG } }))),
    'multiple_bg_sources',
  );
  t.equal(parseRemoveRequest(withImage({ bg_image_url: 'https://e.com/b.jpg' })).bgSource?.kind, 'url');
  t.equal(parseRemoveRequest(withImage({ bg_image_file: { kind: 'file', data: PNG } })).bgSource?.kind, 'bytes');
  t.equal(
    code(() => parseRemoveRequest(withImage({ bg_image_url: 'gopher://x' }))),
    'invalid_bg_image_url',
  );
});

t.test('lengths', async (t) => {
  t.same(parseLength('0'), { value: 0, unit: 'px' });
  t.same(parseLength('12PX'), { value: 12, unit: 'px' });
  t.same(parseLength('.5%'), { value: 0.5, unit: '%' });
  t.equal(parseLength('5'), null);
  t.equal(parseLength('-5px'), null);
});

t.test('Accept: application/json', async (t) => {
  t.equal(wantsJson('application/json'), true);
  t.equal(wantsJson('text/html, Application/JSON;q=0.9'), true);
  t.equal(wantsJson('application/json;q=0'), false);
  t.equal(wantsJson('*/*'), false);
  t.equal(wantsJson('image/*'), false);
  t.equal(wantsJson(undefined), false);
});
