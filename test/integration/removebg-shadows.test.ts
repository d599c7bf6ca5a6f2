// shadow_type / shadow_opacity / add_shadow through HTTP and the real worker: where each kind puts
// shadow alpha, that the subject's opaque pixels and X-Foreground-* stay, and that no shadow is
// byte-identical to a request without the fields.
import sharp from 'sharp';
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { syntheticFigure } from '../helpers/core-fixtures.js';
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
  const post = async (fields: Record<string, string>) => {
    const res = await postImage(url, input, { size: 'preview', ...fields });
    if (res.status !== 200) throw new Error(`${JSON.stringify(fields)}: ${res.status} ${res.text()}`);
    return res;
  };
  const rgba = async (body: Uint8Array) => sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const plain = await post({});
  const base = await rgba(plain.body);
  const fgOf = (res: typeof plain) => ['top', 'left', 'width', 'height'].map((k) => Number(res.headers[`x-foreground-${k}`]));
  const [top, left, width, height] = fgOf(plain) as [number, number, number, number];
  const W = base.info.width;

  /** New shadow pixels (transparent before, some alpha now) and opaque pixels whose bytes changed. */
  async function compare(body: Uint8Array) {
    const { data } = await rgba(body);
    let shadowed = 0,
      opaqueChanged = 0,
      maxAlpha = 0,
      above = 0,
      left_ = 0,
      right = 0;
    for (let i = 0, p = 0; i < data.length; i += 4, p++) {
      const a0 = base.data[i + 3]!,
        a1 = data[i + 3]!;
      if (a0 === 255 && (a1 !== 255 || data[i] !== base.data[i] || data[i + 1] !== base.data[i + 1] || data[i + 2] !== base.data[i + 2])) opaqueChanged++;
      if (a0 === 0 && a1 > 0) {
        shadowed++;
        maxAlpha = Math.max(maxAlpha, a1);
        const x = p % W,
          y = Math.floor(p / W);
        if (y < top) above++;
        if (x < left) left_++;
        if (x >= left + width) right++;
      }
    }
    return { shadowed, opaqueChanged, maxAlpha, above, left: left_, right };
  }

  t.test('each kind draws where it belongs, at its opacity, and leaves the subject', async (t) => {
    for (const kind of ['drop', '3D', 'car']) {
      const res = await post({ shadow_type: kind, shadow_opacity: '60' });
      const c = await compare(res.body);
      t.ok(c.shadowed > 100, `${kind}: ${c.shadowed} background pixels carry shadow`);
      t.equal(c.opaqueChanged, 0, `${kind}: the subject's opaque pixels keep their bytes`);
      t.ok(c.maxAlpha <= Math.round(0.6 * 255) + 1 && c.maxAlpha >= 0.6 * 255 * 0.8, `${kind}: darkest shadow alpha ${c.maxAlpha} ≈ 60 % of 255`);
      t.same(fgOf(res), [top, left, width, height], `${kind}: X-Foreground-* still describe the subject`);
      if (kind === 'drop') t.ok(c.right > c.left, `drop falls to the right (${c.right} right of the box, ${c.left} left)`);
      else t.equal(c.above, 0, `${kind}: nothing above the subject`);
    }
  });

  t.test('no shadow is byte-identical to no field', async (t) => {
    const noShadow: Array<Record<string, string>> = [
      { shadow_type: 'none' },
      { shadow_type: 'drop', shadow_opacity: '0' },
      { add_shadow: 'true' },
      { 'shadow_type[car]': 'car' },
    ];
    for (const fields of noShadow) {
      t.ok(Buffer.from((await post(fields)).body).equals(Buffer.from(plain.body)), `${JSON.stringify(fields)} (type auto is 'other')`);
    }
  });

  t.test('add_shadow and per-class values follow the request type', async (t) => {
    const car = await compare((await post({ type: 'car', add_shadow: 'true' })).body);
    t.ok(car.shadowed > 100 && car.above === 0, 'add_shadow=true with type=car: a car shadow');
    const person = await compare((await post({ type: 'person', shadow_type: 'auto' })).body);
    t.ok(person.shadowed > 100 && person.above === 0, 'auto for a person: 3D, under the subject');
    const perClass = await compare((await post({ type: 'product', 'shadow_type[product]': 'drop', 'shadow_opacity[product]': '40' })).body);
    t.ok(perClass.shadowed > 100 && perClass.maxAlpha <= Math.round(0.4 * 255) + 1, `per-class drop at 40 (darkest ${perClass.maxAlpha})`);
  });

  t.test('JPG on a colour, and ZIP', async (t) => {
    const flat = await sharp((await post({ format: 'jpg', bg_color: 'ffffff' })).body)
      .raw()
      .toBuffer();
    const shaded = await sharp((await post({ format: 'jpg', bg_color: 'ffffff', shadow_type: 'drop', shadow_opacity: '80' })).body)
      .raw()
      .toBuffer();
    let darker = 0;
    for (let i = 0; i < flat.length; i++) if (shaded[i]! + 20 < flat[i]!) darker++;
    t.ok(darker > 100, `the shadow darkens the white background (${darker} samples darker by > 20)`);
    const zip = await post({ format: 'zip', shadow_type: '3D' });
    t.equal(zip.headers['content-type'], 'application/zip');
    t.notOk(Buffer.from(zip.body).equals(Buffer.from((await post({ format: 'zip' })).body)), 'the ZIP carries the shadow');
  });
}
