// The worker pipeline through the library API: sizes, formats, orientation, colour spaces, transfer and typed failures.
import t from 'tap';
import sharp from 'sharp';
import { unzipSync } from 'fflate';
import { createRemover, RemoveError } from '../../src/lib/remove.js';
import { EVAL_SKIP, evalImage, rgbaOf, syntheticFigure, syntheticPhoto } from '../helpers/core-fixtures.js';

const remover = await createRemover({ workers: 1 });
t.teardown(() => remover.close());
// Where any photo of a subject will do: 800x563 (0.45 MP) like am_GT04, so preview downscales it and
// full does not; a figure off the centre line, so a wrong rotation changes the cut-out.
const figure = await syntheticFigure(800, 563, 'png');

t.test('PNG output is 8-bit RGBA at the right size for each size tier', async (t) => {
  const photo = await syntheticPhoto(3000, 2000); // 6 MP
  const expect: Record<string, [number, number]> = {
    preview: [612, 408],
    medium: [1500, 1000],
    hd: [2449, 1632],
    full: [3000, 2000],
    '50MP': [3000, 2000],
  };
  for (const [size, [w, h]] of Object.entries(expect)) {
    const out = await remover.remove(photo, { size: size as never, format: 'png' });
    t.equal(out.contentType, 'image/png');
    const meta = await sharp(out.data).metadata();
    t.same([meta.width, meta.height, meta.channels, meta.depth, meta.format], [w, h, 4, 'uchar', 'png'], `${size}: ${w}x${h} RGBA`);
    t.same([out.width, out.height], [w, h], `${size}: reported size`);
  }
});

t.test('a real photo: the subject is opaque, the backdrop transparent, the box tight', { skip: EVAL_SKIP }, async (t) => {
  const out = await remover.remove(evalImage('am_GT04'), { size: 'full', format: 'png' });
  const { data, width, height } = await rgbaOf(out.data);
  t.same([width, height], [800, 563]);
  const alphaAt = (x: number, y: number) => data[(y * width + x) * 4 + 3]!;
  t.equal(alphaAt(5, 5), 0, 'top-left backdrop transparent');
  t.equal(alphaAt(330, 480), 255, 'doll body opaque');
  // Fully transparent pixels carry no colour (smaller, faster PNGs).
  let hidden = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i + 3] === 0 && (data[i]! | data[i + 1]! | data[i + 2]!) !== 0) hidden++;
  t.equal(hidden, 0, 'no colour left under alpha 0');
  const f = out.foreground;
  t.ok(f.left > 50 && f.left < 200 && f.width > 500 && f.height > 400, `foreground box ${JSON.stringify(f)}`);
});

t.test('matting:false is accepted and only softens the edge band; the quality switches must be booleans', async (t) => {
  const photo = figure;
  const on = await rgbaOf((await remover.remove(photo, { size: 'full', format: 'png' })).data);
  const off = await rgbaOf((await remover.remove(photo, { size: 'full', format: 'png', matting: false })).data);
  let changed = 0;
  let crossed = 0;
  for (let i = 3; i < on.data.length; i += 4) {
    if (on.data[i] !== off.data[i]) changed++;
    if (on.data[i]! >= 128 !== off.data[i]! >= 128) crossed++;
  }
  t.ok(changed > 1000, `matting (on by default) changed ${changed} alpha values`);
  t.equal(crossed, 0, 'but none across 0.5');
  for (const [name, bad, shown] of [
    ['matting', 'no', 'no of type string'],
    ['refine', 1, '1 of type number'],
    ['decontaminate', null, 'null of type object'],
  ] as const) {
    await t.rejects(
      remover.remove(photo, { size: 'preview', [name]: bad } as never),
      {
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: `Expected a boolean for ${name} but received ${shown}`,
      },
      `${name}: ${JSON.stringify(bad)}`,
    );
  }
  // Every option is checked at the edge (test/unit/library-options.test.ts); size 'auto' used to reach
  // the worker and come back as internal_error "… for width but received NaN".
  await t.rejects(
    remover.remove(photo, { size: 'auto' } as never),
    {
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: 'Expected one of preview, medium, hd, full, 50MP for size but received auto of type string',
    },
    "size 'auto'",
  );
});

t.test('EXIF orientation is applied: a rotated file comes out upright', async (t) => {
  const upright = figure;
  // Store the pixels rotated 90° counter-clockwise and tag orientation 6 (display rotates 90° clockwise).
  const stored = await sharp(upright).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer();
  const a = await remover.remove(stored, { size: 'full', format: 'png' });
  const b = await remover.remove(await sharp(upright).jpeg({ quality: 95 }).toBuffer(), { size: 'full', format: 'png' });
  t.same([a.width, a.height], [800, 563], 'upright dimensions');
  const pa = await rgbaOf(a.data);
  const pb = await rgbaOf(b.data);
  let diff = 0;
  for (let i = 3; i < pa.data.length; i += 4) diff += Math.abs(pa.data[i]! - pb.data[i]!);
  const mae = diff / (pa.data.length / 4) / 255;
  t.ok(mae < 0.03, `alpha matches the upright original (MAE ${mae.toFixed(4)})`);
});

t.test('CMYK, grayscale, 16-bit and transparent inputs are normalised', async (t) => {
  const base = await syntheticPhoto(320, 240, 'png');
  const variants: Record<string, Buffer> = {
    cmyk: await sharp(base).toColourspace('cmyk').jpeg().toBuffer(),
    grey: await sharp(base).grayscale().png().toBuffer(),
    rgb16: await sharp(base).toColourspace('rgb16').png().toBuffer(),
    webp: await sharp(base).webp().toBuffer(),
  };
  for (const [name, bytes] of Object.entries(variants)) {
    const out = await remover.remove(bytes, { size: 'full', format: 'png' });
    const meta = await sharp(out.data).metadata();
    t.same([meta.width, meta.height, meta.channels, meta.depth], [320, 240, 4, 'uchar'], name);
  }
  // The input's own transparency stays transparent whatever the model says.
  const holed = await sharp(base)
    .ensureAlpha()
    .composite([
      { input: { create: { width: 80, height: 240, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }, left: 120, top: 0, blend: 'dest-in' },
    ])
    .png()
    .toBuffer();
  const out = await rgbaOf((await remover.remove(holed, { size: 'full', format: 'png' })).data);
  t.equal(out.data[(120 * 320 + 160) * 4 + 3], 0, 'transparent input pixel stays transparent');
});

t.test('formats: jpg, webp, zip, auto, alpha channel, background colour', async (t) => {
  const input = figure;
  const jpg = await remover.remove(input, { size: 'preview', format: 'jpg' });
  t.equal(jpg.contentType, 'image/jpeg');
  t.same((await sharp(jpg.data).metadata()).channels, 3);
  const corner = await sharp(jpg.data).extract({ left: 0, top: 0, width: 4, height: 4 }).raw().toBuffer();
  t.ok(
    corner.every((v) => v > 240),
    'transparent areas are white in JPEG',
  );

  const webp = await remover.remove(input, { size: 'preview', format: 'webp' });
  t.equal(webp.contentType, 'image/webp');
  t.same((await sharp(webp.data).metadata()).hasAlpha, true);

  const zip = await remover.remove(input, { size: 'preview', format: 'zip' });
  t.equal(zip.contentType, 'application/zip');
  const files = unzipSync(zip.data);
  t.same(Object.keys(files).sort(), ['alpha.png', 'color.jpg']);
  const colour = await sharp(files['color.jpg']!).metadata();
  const alpha = await sharp(files['alpha.png']!).metadata();
  t.same([colour.format, colour.channels, colour.width, colour.height], ['jpeg', 3, zip.width, zip.height]);
  t.same([alpha.format, alpha.channels, alpha.width, alpha.height], ['png', 1, zip.width, zip.height]);

  const auto = await remover.remove(input, { size: 'preview', format: 'auto' });
  t.equal(auto.contentType, 'image/png', 'auto with transparency → PNG');
  const autoOpaque = await remover.remove(input, { size: 'preview', format: 'auto', bgColor: [0, 255, 0, 255] });
  t.equal(autoOpaque.contentType, 'image/jpeg', 'auto without transparency → JPEG');

  const mask = await remover.remove(input, { size: 'preview', format: 'png', channels: 'alpha' });
  const m = await sharp(mask.data).metadata();
  t.same([m.channels, m.width, m.height], [1, mask.width, mask.height], 'alpha-only output is one channel');

  const green = await remover.remove(input, { size: 'preview', format: 'png', bgColor: [0, 255, 0, 255] });
  const g = await rgbaOf(green.data);
  t.same(Array.from(g.data.subarray(0, 4)), [0, 255, 0, 255], 'backdrop becomes the background colour');
  let opaque = true;
  for (let i = 3; i < g.data.length; i += 4) if (g.data[i] !== 255) opaque = false;
  t.ok(opaque, 'an opaque background colour gives an opaque image');
});

t.test('crop trims to the subject', async (t) => {
  const input = figure; // 800x563: not downscaled at full, so the box is in result pixels
  const full = await remover.remove(input, { size: 'full', format: 'png' });
  const cropped = await remover.remove(input, { size: 'full', format: 'png', crop: true });
  t.same([cropped.width, cropped.height], [full.foreground.width, full.foreground.height]);
  t.same(cropped.foreground, { top: 0, left: 0, width: full.foreground.width, height: full.foreground.height });
});

t.test("the foreground box is remove.bg's: at the input's resolution when the size tier downscales", async (t) => {
  const input = figure; // 800x563 = 0.45 MP; preview is 0.25 MP
  const full = await remover.remove(input, { size: 'full', format: 'png' });
  const preview = await remover.remove(input, { size: 'preview', format: 'png' });
  t.ok(preview.width < 800, `preview downscaled (${preview.width}x${preview.height})`);
  // The same subject, in input pixels both times (the model's mask differs a little at another size).
  const near = (a: number, b: number) => Math.abs(a - b) <= 4;
  const [f, p] = [full.foreground, preview.foreground];
  t.ok(
    near(p.top, f.top) && near(p.left, f.left) && near(p.width, f.width) && near(p.height, f.height),
    `preview ${JSON.stringify(p)} ≈ full ${JSON.stringify(f)}`,
  );
  const cropped = await remover.remove(input, { size: 'preview', format: 'png', crop: true });
  t.same([cropped.foreground.top, cropped.foreground.left], [0, 0], 'crop: the subject starts the result');
  t.ok(
    near(cropped.foreground.width, f.width) && near(cropped.foreground.height, f.height),
    `crop at preview: ${JSON.stringify(cropped.foreground)}, input pixels`,
  );
  t.ok(cropped.width < cropped.foreground.width, `while the result itself is ${cropped.width}x${cropped.height}`);
});

t.test('the input buffer is transferred to the worker, not copied', async (t) => {
  const bytes = figure;
  const owned = new Uint8Array(new ArrayBuffer(bytes.byteLength));
  owned.set(bytes);
  await remover.remove(owned, { size: 'preview', format: 'png', transferInput: true });
  t.equal(owned.buffer.byteLength, 0, 'the caller’s ArrayBuffer was detached by the transfer');
  const kept = Buffer.from(bytes);
  await remover.remove(kept, { size: 'preview', format: 'png' });
  t.equal(kept.byteLength, bytes.byteLength, 'without transferInput the caller keeps its buffer');
});

t.test('bad inputs give typed errors and the pool keeps working', async (t) => {
  const expectCode = async (bytes: Uint8Array, code: string, message?: RegExp) => {
    const err = await remover.remove(bytes, { size: 'preview' }).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof RemoveError, `${code}: a RemoveError`);
    t.match(err, { code, ...(message ? { message } : {}) }, code);
  };
  await expectCode(Buffer.from('definitely not an image'), 'invalid_file_type', /^Expected jpg\/png\/webp, received a text file$/);
  await expectCode(new Uint8Array(0), 'invalid_file_type');
  // Sniffed at the library's edge, before a worker sees it (named from its magic bytes).
  const gif = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
    .gif()
    .toBuffer();
  await expectCode(gif, 'invalid_file_type', /^Expected jpg\/png\/webp, received gif$/);
  await t.rejects(remover.remove('not bytes' as never), {
    name: 'TypeError',
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'Expected a Uint8Array or Buffer for input but received not bytes of type string',
  });
  const png = await syntheticPhoto(64, 64, 'png');
  await expectCode(png.subarray(0, png.length - 40), 'failed_to_read_image');
  const jpeg = await syntheticPhoto(640, 480, 'jpeg');
  await expectCode(jpeg.subarray(0, Math.floor(jpeg.length / 2)), 'failed_to_read_image');
  // A decompression bomb: a valid 1×1 PNG whose header claims 100000×100000.
  const bomb = Buffer.from(
    await sharp({ create: { width: 1, height: 1, channels: 3, background: '#fff' } })
      .png()
      .toBuffer(),
  );
  bomb.writeUInt32BE(100000, 16);
  bomb.writeUInt32BE(100000, 20);
  const crc = (await import('node:zlib')).crc32(bomb.subarray(12, 29));
  bomb.writeUInt32BE(crc, 29);
  await expectCode(bomb, 'resolution_too_high', /10000 megapixels/);
  const ok = await remover.remove(await syntheticPhoto(64, 48), { size: 'preview' });
  t.same([ok.width, ok.height], [64, 48], 'next request still served');
});
