// codec.probe reads the header through the addon (binding.probeHeader: libvips' header on the calling
// thread) and through sharp's metadata() only where the addon declines. Both must say the same of every
// image: the same Probe for every kind of JPEG, PNG and WebP (sizes, orientations, profiles, alpha,
// depths, subsampling, interlacing, the dev photos), and for other formats, broken and mutated bytes
// the same outcome as sharp alone (the same Probe or the same refusal), never a crash.
import t from 'tap';
import sharp from 'sharp';
import { loadBinding } from '../../src/native/binding.js';
import * as codec from '../../src/worker/codec.js';
import { EVAL_SKIP, evalImage, readManifest } from '../helpers/core-fixtures.js';
import { seededBytes } from '../helpers/images.js';

const binding = loadBinding();

/** A photo-like RGB image: gradients and seeded noise. */
function photoLike(w: number, h: number): Buffer {
  const noise = seededBytes(w * h, 5);
  const out = Buffer.alloc(w * h * 3);
  for (let i = 0; i < w * h; i++) {
    out[3 * i] = Math.round((255 * (i % w)) / w);
    out[3 * i + 1] = (Math.round((255 * Math.floor(i / w)) / h) + (noise[i]! >> 3)) & 255;
    out[3 * i + 2] = noise[i]! >> 1;
  }
  return out;
}

/** probe's outcome as comparable text: the Probe, or the refusal's class and message. */
async function outcome(p: Promise<codec.Probe>): Promise<string> {
  return p.then(
    (probe) => JSON.stringify(probe),
    (err: Error) => `${err.constructor.name}: ${err.message}`,
  );
}

async function kinds(): Promise<Array<[string, Buffer]>> {
  const base = await sharp(photoLike(161, 97), { raw: { width: 161, height: 97, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
  return [
    ['a JPEG 4:2:0', base],
    ['a JPEG 4:4:4', await sharp(base).jpeg({ chromaSubsampling: '4:4:4' }).toBuffer()],
    ['a progressive JPEG', await sharp(base).jpeg({ progressive: true }).toBuffer()],
    ['a JPEG with an ICC profile', await sharp(base).withIccProfile('p3').jpeg().toBuffer()],
    ['a JPEG with orientation 6', await sharp(base).withMetadata({ orientation: 6 }).jpeg().toBuffer()],
    ['a JPEG with orientation 3', await sharp(base).withMetadata({ orientation: 3 }).jpeg().toBuffer()],
    ['a grey JPEG', await sharp(base).toColourspace('b-w').jpeg().toBuffer()],
    ['a CMYK JPEG', await sharp(base).toColourspace('cmyk').jpeg().toBuffer()],
    ['a PNG', await sharp(base).png().toBuffer()],
    ['an interlaced PNG', await sharp(base).png({ progressive: true }).toBuffer()],
    ['a palette PNG', await sharp(base).png({ palette: true }).toBuffer()],
    ['a PNG with alpha', await sharp(base).ensureAlpha(0.5).png().toBuffer()],
    ['a 16-bit PNG', await sharp(base).toColourspace('rgb16').png().toBuffer()],
    ['a grey PNG', await sharp(base).toColourspace('b-w').png().toBuffer()],
    ['a grey PNG with alpha', await sharp(base).toColourspace('b-w').ensureAlpha(0.5).png().toBuffer()],
    ['a lossy WebP', await sharp(base).webp().toBuffer()],
    ['a lossless WebP', await sharp(base).webp({ lossless: true }).toBuffer()],
    ['a WebP with alpha', await sharp(base).ensureAlpha(0.5).webp().toBuffer()],
    ['a WebP with orientation 8', await sharp(base).withMetadata({ orientation: 8 }).webp().toBuffer()],
  ];
}

t.test('every kind of JPEG, PNG and WebP: read by the addon, the Probe sharp gives', async (t) => {
  for (const [name, bytes] of await kinds()) {
    const input = new Uint8Array(bytes);
    t.ok(binding.probeHeader(input), `${name}: the addon reads its header`);
    t.same(await codec.probe(input), await codec.probeBySharp(input), `${name}: the same Probe`);
  }
});

t.test('the dev photos: the Probe sharp gives', { skip: EVAL_SKIP }, async (t) => {
  const rows = readManifest();
  const photos = [...rows.filter((r) => r.image_path.endsWith('.jpg')).slice(0, 6), ...rows.filter((r) => r.image_path.endsWith('.png')).slice(0, 3)];
  t.ok(photos.length >= 6, 'some dev JPEGs and PNGs');
  for (const row of photos) {
    const input = new Uint8Array(evalImage(row.id));
    t.same(await codec.probe(input), await codec.probeBySharp(input), `${row.id}: the same Probe`);
  }
});

t.test('other formats and broken bytes: declined by the addon, refused as sharp refuses them', async (t) => {
  const base = await sharp(photoLike(64, 48), { raw: { width: 64, height: 48, channels: 3 } })
    .jpeg()
    .toBuffer();
  const png = await sharp(base).png().toBuffer();
  const cases: Array<[string, Uint8Array]> = [
    ['a GIF', new Uint8Array(await sharp(base).gif().toBuffer())],
    ['a TIFF', new Uint8Array(await sharp(base).tiff().toBuffer())],
    ['no bytes', new Uint8Array(0)],
    ['text', new Uint8Array(Buffer.from('not an image at all'))],
    ['a bare JPEG SOI', new Uint8Array([0xff, 0xd8, 0xff])],
    ['a JPEG cut inside its header', new Uint8Array(base.subarray(0, 100))],
    ['a PNG signature alone', new Uint8Array(png.subarray(0, 8))],
    ['a PNG cut inside IHDR', new Uint8Array(png.subarray(0, 20))],
  ];
  for (const [name, input] of cases) {
    t.equal(binding.probeHeader(input), null, `${name}: declined by the addon`);
    t.equal(await outcome(codec.probe(input)), await outcome(codec.probeBySharp(input)), `${name}: sharp's outcome`);
  }
  t.throws(() => binding.probeHeader('x' as never), { code: 'ERR_CUTOUT_ARG' }, 'not bytes: a coded error');
});

t.test('mutated headers: the outcome sharp gives, never a crash', async (t) => {
  const base = await sharp(photoLike(120, 90), { raw: { width: 120, height: 90, channels: 3 } })
    .withMetadata({ orientation: 1 })
    .jpeg()
    .toBuffer();
  const files: Array<[string, Buffer]> = [
    ['JPEG', base],
    ['PNG', await sharp(base).png().toBuffer()],
    ['WebP', await sharp(base).webp().toBuffer()],
  ];
  let seed = 20261129;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (const [name, file] of files) {
    let differ = 0,
      read = 0;
    for (let i = 0; i < 120; i++) {
      const bytes = new Uint8Array(file);
      const span = Math.min(bytes.length, 400); // where the header lies
      for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) bytes[Math.floor(rnd() * span)] = Math.floor(rnd() * 256);
      const input = rnd() < 0.2 ? bytes.subarray(0, Math.floor(rnd() * span)) : bytes;
      if (binding.probeHeader(input)) read++;
      if ((await outcome(codec.probe(input))) !== (await outcome(codec.probeBySharp(input)))) differ++;
    }
    t.equal(differ, 0, `${name}: 120 mutations, the same outcome as sharp's each time (${read} read by the addon)`);
  }
});
