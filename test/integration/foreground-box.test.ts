// The library and the HTTP API give the same foreground box for the same photo and options (crop, scale, position, a downscaled output): the worker computes it once, with remove.bg's meaning, and both hand it on as is.
import t from 'tap';
import { DEFAULT_OPTIONS, type RemoveOptions } from '../../src/domain/removal.js';
import { createRemover } from '../../src/lib/remove.js';
import { postImage } from '../helpers/api.js';
import { syntheticFigure } from '../helpers/core-fixtures.js';
import { startTestServer } from '../helpers/server.js';

// One pool for both, so the same worker and model answer the library and the HTTP request.
const remover = await createRemover({ workers: 1 });
t.teardown(() => remover.close());
const photo = await syntheticFigure(800, 563, 'png'); // 800x563: preview (0.25 MP) downscales it, full does not

const px = (v: number) => ({ value: v, unit: 'px' as const });
const cases: Array<{ name: string; fields: Record<string, string>; options: Partial<RemoveOptions> }> = [
  { name: 'full size', fields: { size: 'full' }, options: { size: 'full' } },
  { name: 'downscaled (preview)', fields: { size: 'preview' }, options: { size: 'preview' } },
  {
    name: 'downscaled, cropped with a margin',
    fields: { size: 'preview', crop: 'true', crop_margin: '10px' },
    options: { size: 'preview', crop: true, cropMargin: { top: px(10), right: px(10), bottom: px(10), left: px(10) } },
  },
  { name: 'scaled (implies centre)', fields: { size: 'full', scale: '50%' }, options: { size: 'full', scale: 0.5 } },
  {
    name: 'downscaled, scaled and positioned',
    fields: { size: 'preview', scale: '60%', position: '0% 100%' },
    options: { size: 'preview', scale: 0.6, position: { x: 0, y: 100 } },
  },
  { name: 'downscaled, positioned', fields: { size: 'preview', position: '20% 80%' }, options: { size: 'preview', position: { x: 20, y: 80 } } },
];

t.test("X-Foreground-* and foreground_* equal the library's foreground", async (t) => {
  const { url } = await startTestServer(t, { pool: remover.pool });
  for (const { name, fields, options } of cases) {
    const lib = await remover.remove(photo, { ...DEFAULT_OPTIONS, format: 'png', ...options });
    const res = await postImage(url, photo, { format: 'png', ...fields });
    t.equal(res.status, 200, `${name}: ${res.status === 200 ? 'ok' : res.text()}`);
    const header = {
      top: Number(res.headers['x-foreground-top']),
      left: Number(res.headers['x-foreground-left']),
      width: Number(res.headers['x-foreground-width']),
      height: Number(res.headers['x-foreground-height']),
    };
    t.same(header, lib.foreground, `${name}: X-Foreground-* ${JSON.stringify(header)}`);
    t.same([Number(res.headers['x-width']), Number(res.headers['x-height'])], [lib.width, lib.height], `${name}: the same result size`);
    t.ok(lib.foreground.width > 0 && lib.foreground.height > 0, `${name}: a subject was found`);
  }
  const json = await postImage(url, photo, { format: 'png', size: 'preview', crop: 'true' }, { Accept: 'application/json' });
  const { data } = JSON.parse(json.text()) as { data: Record<string, number> };
  const lib = await remover.remove(photo, { ...DEFAULT_OPTIONS, format: 'png', size: 'preview', crop: true });
  t.same(
    { top: data.foreground_top, left: data.foreground_left, width: data.foreground_width, height: data.foreground_height },
    lib.foreground,
    'JSON foreground_* too',
  );
});
