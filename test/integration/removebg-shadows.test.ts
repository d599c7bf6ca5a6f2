// shadow_type / shadow_opacity / add_shadow through HTTP and the real worker: where each kind puts
// shadow alpha, that the subject's opaque pixels and X-Foreground-* stay, each kind as PNG, as JPG on
// a colour and as ZIP (a generated figure always; a real photo when the research set is here), `auto`
// resolved by `type` as remove.bg documents it, and no shadow byte-identical to no field.
import { unzipSync } from 'fflate';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { postImage, postMultipart } from '../helpers/api.js';
import { EVAL_SKIP, evalImage, syntheticFigure } from '../helpers/core-fixtures.js';
import { tryRealPool } from '../helpers/real.js';
import { startTestServer } from '../helpers/server.js';

const real = await tryRealPool({ workers: 1 });
if ('skip' in real) {
  t.comment(real.skip);
  t.pass('skipped: no real pool');
} else {
  const pool = real.pool;
  t.teardown(() => pool.close());
  // The figure stands on the bottom edge: room below it for the ground shadows, in its background's colour.
  const figure = await syntheticFigure(480, 338);
  const corner = await sharp(figure).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer();
  const input = await sharp(figure)
    .extend({ bottom: 120, background: { r: corner[0]!, g: corner[1]!, b: corner[2]! } })
    .png()
    .toBuffer();
  const { url } = await startTestServer(t, { pool: pool as never });
  const post = async (fields: Record<string, string>, image: Uint8Array = input) => {
    const res = await postImage(url, image, { size: 'preview', ...fields });
    if (res.status !== 200) throw new Error(`${JSON.stringify(fields)}: ${res.status} ${res.text()}`);
    return res;
  };
  const rgba = async (body: Uint8Array) => sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const plain = await post({});
  const fgOf = (res: typeof plain) => ['top', 'left', 'width', 'height'].map((k) => Number(res.headers[`x-foreground-${k}`]));
  const bytes = async (fields: Record<string, string>) => Buffer.from((await post(fields)).body);

  t.test('no shadow is byte-identical to no field', async (t) => {
    const noShadow: Array<Record<string, string>> = [
      { shadow_type: 'none' },
      { shadow_type: 'drop', shadow_opacity: '0' },
      { add_shadow: 'true' },
      { 'shadow_type[car]': 'car' },
    ];
    for (const fields of noShadow) {
      t.ok((await bytes(fields)).equals(Buffer.from(plain.body)), `${JSON.stringify(fields)} (type auto is 'other')`);
    }
  });

  t.test('add_shadow and per-class values follow the request type', async (t) => {
    const same: Array<[string, Record<string, string>, Record<string, string>]> = [
      ['add_shadow=true with type=car: car at 90', { type: 'car', add_shadow: 'true' }, { type: 'car', shadow_type: 'car', shadow_opacity: '90' }],
      [
        'per-class values for the request type',
        { type: 'product', 'shadow_type[product]': 'drop', 'shadow_opacity[product]': '40' },
        { type: 'product', shadow_type: 'drop', shadow_opacity: '40' },
      ],
      ["the request type's value wins over a plain one", { type: 'car', shadow_type: 'drop', 'shadow_type[car]': '3D' }, { type: 'car', shadow_type: '3D' }],
      ['per-class values for another type: no shadow', { type: 'person', 'shadow_type[product]': 'drop' }, { type: 'person' }],
    ];
    const none = Buffer.from(plain.body);
    for (const [name, fields, explicit] of same) {
      const got = await bytes(fields);
      t.ok(got.equals(await bytes(explicit)), name);
      if (explicit.shadow_type) t.notOk(got.equals(none), `${name}: a shadow was drawn`);
    }
  });

  /**
   * Each kind as PNG, as JPG on white and as ZIP, for one photo: the PNG puts shadow where the kind
   * belongs and keeps the subject; the JPG is that PNG on white (to JPEG's error); the ZIP's alpha.png
   * is that PNG's alpha, its color.jpg that PNG's colour.
   */
  async function everyKindAndFormat(t: Test, image: Uint8Array) {
    const plain = await post({ format: 'png' }, image);
    const before = await rgba(plain.body);
    const W = before.info.width;
    // X-Foreground-* measure the photo as sent; preview may have made the result smaller.
    const scale = W / (await sharp(image).metadata()).width!;
    const [top, left, width] = ['top', 'left', 'width'].map((k) => Number(plain.headers[`x-foreground-${k}`]) * scale) as [number, number, number];
    for (const kind of ['drop', '3D', 'car']) {
      const fields = { shadow_type: kind, shadow_opacity: '60' };
      const png = await post({ format: 'png', ...fields }, image);
      const after = await rgba(png.body);
      let shadowed = 0;
      let opaqueChanged = 0;
      let darkest = 0;
      let above = 0;
      let leftOf = 0;
      let rightOf = 0;
      for (let i = 0, p = 0; i < after.data.length; i += 4, p++) {
        if (before.data[i + 3] === 255) {
          if (before.data.compare(after.data, i, i + 4, i, i + 4) !== 0) opaqueChanged++;
        } else if (before.data[i + 3] === 0 && after.data[i + 3]! > 0) {
          shadowed++;
          darkest = Math.max(darkest, after.data[i + 3]!);
          const x = p % W;
          if (Math.floor(p / W) < top - 1) above++;
          if (x < left) leftOf++;
          if (x > left + width) rightOf++;
        }
      }
      t.ok(shadowed > 500, `${kind} PNG: ${shadowed} background pixels carry shadow`);
      t.equal(opaqueChanged, 0, `${kind} PNG: the subject's opaque pixels keep their bytes`);
      t.ok(darkest <= 154 && darkest >= 0.6 * 255 * 0.8, `${kind} PNG: the darkest shadow alpha ${darkest} ≈ 60 % of 255`);
      t.same(
        ['top', 'left', 'width', 'height'].map((k) => png.headers[`x-foreground-${k}`]),
        ['top', 'left', 'width', 'height'].map((k) => plain.headers[`x-foreground-${k}`]),
        `${kind}: X-Foreground-* still describe the subject`,
      );
      if (kind === 'drop') t.ok(rightOf > leftOf, `drop falls to the right (${rightOf} pixels right of the subject, ${leftOf} left)`);
      else t.equal(above, 0, `${kind}: nothing above the subject`);

      // JPG on white: the PNG flattened on white, to JPEG's error.
      const jpg = await post({ format: 'jpg', bg_color: 'ffffff', ...fields }, image);
      t.equal(jpg.headers['content-type'], 'image/jpeg');
      const got = await sharp(jpg.body).raw().toBuffer();
      const want = await sharp(png.body).flatten({ background: '#ffffff' }).raw().toBuffer();
      let sum = 0;
      for (let i = 0; i < got.length; i++) sum += Math.abs(got[i]! - want[i]!);
      t.ok(sum / got.length < 1, `${kind} JPG on white: the PNG on white (mean error ${(sum / got.length).toFixed(2)} levels)`);
      // Where the shadow is at least 1/8 dark, the white under it is grey (255 − alpha, no shadow: 255).
      let under = 0;
      let grey = 0;
      for (let p = 0; p < got.length / 3; p++) {
        if (before.data[p * 4 + 3] !== 0 || after.data[p * 4 + 3]! < 32) continue;
        under++;
        if (Math.max(got[p * 3]!, got[p * 3 + 1]!, got[p * 3 + 2]!) < 240) grey++;
      }
      t.ok(under > 100 && grey >= 0.95 * under, `${kind} JPG on white: the shadow darkens the white (${grey} of ${under} pixels)`);

      // ZIP: alpha.png is the PNG's alpha, byte for byte; color.jpg its colour.
      const zip = await post({ format: 'zip', ...fields }, image);
      t.equal(zip.headers['content-type'], 'application/zip');
      const files = unzipSync(zip.body);
      const alpha = await sharp(files['alpha.png']!).extractChannel(0).raw().toBuffer();
      let alphaApart = 0;
      for (let p = 0; p < alpha.length; p++) if (alpha[p] !== after.data[p * 4 + 3]) alphaApart++;
      t.equal(alphaApart, 0, `${kind} ZIP: alpha.png is the shadowed alpha`);
      const { info } = await sharp(files['color.jpg']!).raw().toBuffer({ resolveWithObject: true });
      t.same([info.width, info.height], [W, before.info.height], `${kind} ZIP: color.jpg at the result size`);
    }
  }

  t.test('every kind × PNG, JPG on white, ZIP: a generated figure standing on a floor', (t) => everyKindAndFormat(t, input));

  // A car on a road (DAVIS car-shadow, frame 15), with room below it: read in place, never committed.
  t.test('every kind × PNG, JPG on white, ZIP: a real photo', { skip: EVAL_SKIP }, (t) => everyKindAndFormat(t, evalImage('davis_car-shadow_00015')));

  t.test("auto resolves by the request's type as remove.bg documents it, kind and opacity", async (t) => {
    const byType: Array<[string, string, string]> = [
      ['car', 'car', '90'],
      ['person', '3D', '50'],
      ['product', 'drop', '50'],
      ['animal', 'drop', '50'],
      ['transportation', '3D', '50'],
      ['graphic', 'drop', '50'],
      ['auto', 'drop', '50'], // cutout does not classify: `auto` is `other`
    ];
    for (const [type, kind, opacity] of byType) {
      const explicit = await bytes({ type, shadow_type: kind, shadow_opacity: opacity });
      t.ok((await bytes({ type, shadow_type: 'auto' })).equals(explicit), `type=${type}: auto is ${kind} at ${opacity}`);
      t.ok((await bytes({ type, shadow_type: kind, shadow_opacity: 'auto' })).equals(explicit), `type=${type}: opacity auto with ${kind} is ${opacity}`);
    }
  });

  t.test('with the other fields: drawn after crop, scale, position and roi, under bg_color and bg_image, in every format and channel', async (t) => {
    const backdrop = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c8d2e6' } })
      .png()
      .toBuffer();
    const send = (fields: Record<string, string>, bg?: Buffer) =>
      bg
        ? postMultipart(url, [
            { name: 'image_file', value: input, filename: 'image_file' },
            { name: 'bg_image_file', value: bg, filename: 'bg_image_file' },
            ...Object.entries({ size: 'preview', ...fields }).map(([name, value]) => ({ name, value })),
          ])
        : post(fields);
    const cases: Array<[string, Record<string, string>, 'drop' | '3D', Buffer?]> = [
      ['crop (the shadow clipped by the subject box)', { crop: 'true' }, 'drop'],
      ['crop with a margin (room for the ground shadow)', { crop: 'true', crop_margin: '25%' }, '3D'],
      ['scale and position', { scale: '60%', position: 'center' }, '3D'],
      ['roi', { roi: '0% 0% 90% 100%' }, 'drop'],
      ['bg_color, PNG', { bg_color: '33aa55' }, 'drop'],
      ['bg_image_file, PNG', {}, '3D', backdrop],
    ];
    for (const [name, fields, kind, bg] of cases) {
      const without = await send({ format: 'png', ...fields }, bg);
      const withShadow = await send({ format: 'png', ...fields, shadow_type: kind, shadow_opacity: '70' }, bg);
      t.equal(withShadow.status, 200, name);
      const a = await rgba(without.body);
      const b = await rgba(withShadow.body);
      t.same([b.info.width, b.info.height], [a.info.width, a.info.height], `${name}: the same size`);
      t.same(fgOf(withShadow), fgOf(without), `${name}: X-Foreground-* the same`);
      // The subject: opaque pixels over a transparent background, and with a background, every pixel
      // the shadow did not reach, keep their bytes; the shadow pixels are darker.
      let kept = 0;
      let changed = 0;
      let darker = 0;
      for (let i = 0; i < a.data.length; i += 4) {
        const same = a.data.compare(b.data, i, i + 4, i, i + 4) === 0;
        if (same) kept++;
        else if (a.data[i + 3] === 255 && !bg && !fields.bg_color) changed++;
        else if (b.data[i]! + b.data[i + 1]! + b.data[i + 2]! < a.data[i]! + a.data[i + 1]! + a.data[i + 2]! || b.data[i + 3]! > a.data[i + 3]!) darker++;
      }
      t.equal(changed, 0, `${name}: the subject's opaque pixels keep their bytes`);
      t.ok(darker > 100, `${name}: ${darker} pixels shaded, ${kept} kept`);
    }

    // channels=alpha: the combined alpha of subject and shadow, as in the RGBA result.
    const rgbaShadow = await rgba((await post({ format: 'png', shadow_type: '3D', shadow_opacity: '70' })).body);
    const alphaOnly = await post({ format: 'png', channels: 'alpha', shadow_type: '3D', shadow_opacity: '70' });
    const mask = await sharp(alphaOnly.body).extractChannel(0).raw().toBuffer();
    let apart = 0;
    for (let p = 0; p < mask.length; p++) if (mask[p] !== rgbaShadow.data[p * 4 + 3]) apart++;
    t.equal(apart, 0, 'channels=alpha: the alpha of subject and shadow');

    // WebP: the shadow's alpha, to WebP's error.
    const webp = await post({ format: 'webp', shadow_type: '3D', shadow_opacity: '70' });
    t.equal(webp.headers['content-type'], 'image/webp');
    const w = await rgba(webp.body);
    let sum = 0;
    for (let i = 3; i < w.data.length; i += 4) sum += Math.abs(w.data[i]! - rgbaShadow.data[i]!);
    t.ok(sum / (w.data.length / 4) < 2, `WebP: the shadowed alpha (mean error ${(sum / (w.data.length / 4)).toFixed(2)})`);
  });
}
