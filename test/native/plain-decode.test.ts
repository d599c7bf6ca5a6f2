// A plain photo (a JPEG, PNG or WebP of 3 × 8-bit sRGB with nothing to convert) decoded by libvips
// straight into our own memory (native/src/libvips_decode.h, codec.decodeRgbaOwned) gives the very
// bytes sharp's decode gives (codec.decodeRgba at full size), for every kind: JPEGs subsampled or
// not, progressive, odd sizes; PNGs plain and interlaced; WebP lossy and lossless; real photos. A
// photo that needs converting (an ICC profile, an orientation, grey, CMYK, alpha, 16 bits) or in
// another format is not plain: the probe says so and the addon declines it, so sharp decodes it.
// Bytes that do not decode (truncated, garbage) throw libvips' reason; broken arguments are
// refused with coded errors.
import t from 'tap';
import sharp, { type JpegOptions } from 'sharp';
import { loadBinding } from '../../src/native/binding.js';
import * as codec from '../../src/worker/codec.js';
import { EVAL_SKIP, evalImage, readManifest } from '../helpers/core-fixtures.js';
import { seededBytes } from '../helpers/images.js';

const binding = loadBinding();

/** A photo-like RGB image: gradients, a disc and seeded noise, so every DCT block has detail. */
function photoLike(w: number, h: number, seed = 7): Uint8Array {
  const noise = seededBytes(w * h, seed);
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const disc = Math.hypot(x - w / 2, y - h / 2) < Math.min(w, h) / 3;
      out[3 * i] = Math.round((255 * x) / Math.max(1, w - 1));
      out[3 * i + 1] = (Math.round((255 * y) / Math.max(1, h - 1)) + (noise[i]! >> 3)) & 255;
      out[3 * i + 2] = disc ? 220 - (noise[i]! >> 4) : 30 + (noise[i]! >> 4);
    }
  }
  return out;
}

function jpegOf(w: number, h: number, opts: JpegOptions): Promise<Buffer> {
  return sharp(photoLike(w, h), { raw: { width: w, height: h, channels: 3 } })
    .jpeg(opts)
    .toBuffer();
}

/** Both decodes of a plain photo: sharp's and ours, into a buffer of its own. */
async function bothDecodes(input: Uint8Array): Promise<{ probe: codec.Probe; bySharp: Buffer; owned: codec.Raw | undefined }> {
  const probe = await codec.probe(input);
  const bySharp = (await codec.decodeRgba(input, 50e6, probe.width, probe.height, true)).data;
  return { probe, bySharp, owned: codec.decodeRgbaOwned(input, probe.width, probe.height) };
}

t.test('libvips is reachable once sharp is loaded', async (t) => {
  t.equal(binding.libvipsDecodeAvailable(), true);
});

t.test('every kind of plain JPEG: the bytes sharp gives', async (t) => {
  const cases: Array<[string, number, number, JpegOptions]> = [
    ['4:2:0, quality 90', 640, 480, { quality: 90, chromaSubsampling: '4:2:0' }],
    ['4:4:4, quality 100', 640, 480, { quality: 100, chromaSubsampling: '4:4:4' }],
    ['progressive, quality 50', 641, 479, { quality: 50, progressive: true }],
    ['odd size, 4:2:0 (half a chroma block at the edges)', 17, 13, { quality: 80, chromaSubsampling: '4:2:0' }],
    ['one pixel', 1, 1, { quality: 80 }],
    ['a 1 MP photo shape', 1333, 750, { quality: 85, mozjpeg: true }],
    // Photos up to 2.5 MP are decoded on the calling thread, bigger ones through libvips' thread pool
    // (libvips_decode.cc): one on either side of that bound.
    ['2.5 MP, decoded on the calling thread', 2000, 1250, { quality: 85 }],
    ["2.56 MP, decoded through libvips' thread pool", 2048, 1250, { quality: 85 }],
  ];
  for (const [name, w, h, opts] of cases) {
    const input = new Uint8Array(await jpegOf(w, h, opts));
    const { probe, bySharp, owned } = await bothDecodes(input);
    t.equal(probe.plainRgb, true, `${name}: plain`);
    t.ok(owned, `${name}: decoded into our own memory`);
    t.same([owned!.width, owned!.height, owned!.channels], [w, h, 4], `${name}: RGBA at its own size`);
    t.ok(owned!.data.equals(bySharp), `${name}: the same bytes as sharp's decode`);
  }
});

t.test('PNG and WebP: the bytes sharp gives', async (t) => {
  const rgb = photoLike(203, 151);
  const raw = { raw: { width: 203, height: 151, channels: 3 as const } };
  const cases: Array<[string, Buffer]> = [
    ['PNG', await sharp(rgb, raw).png().toBuffer()],
    ['interlaced PNG', await sharp(rgb, raw).png({ progressive: true }).toBuffer()],
    ['palette PNG', await sharp(rgb, raw).png({ palette: true, colours: 64 }).toBuffer()],
    ['lossy WebP', await sharp(rgb, raw).webp({ quality: 70 }).toBuffer()],
    ['lossless WebP', await sharp(rgb, raw).webp({ lossless: true }).toBuffer()],
  ];
  for (const [name, bytes] of cases) {
    const input = new Uint8Array(bytes);
    const { probe, bySharp, owned } = await bothDecodes(input);
    t.equal(probe.plainRgb, true, `${name}: plain`);
    t.ok(owned?.data.equals(bySharp), `${name}: the same bytes as sharp's decode`);
  }
});

t.test('the real photos of the dev set (JPEG and PNG): the bytes sharp gives', { skip: EVAL_SKIP }, async (t) => {
  const rows = readManifest();
  const photos = [...rows.filter((row) => row.image_path.endsWith('.jpg')).slice(0, 6), ...rows.filter((row) => row.image_path.endsWith('.png')).slice(0, 3)];
  t.ok(photos.length >= 6, 'some dev JPEGs and PNGs');
  for (const row of photos) {
    const input = new Uint8Array(evalImage(row.id));
    const { probe, bySharp, owned } = await bothDecodes(input);
    if (!probe.plainRgb) {
      t.equal(owned, undefined, `${row.id}: not plain, left to sharp`);
      continue;
    }
    t.ok(owned?.data.equals(bySharp), `${row.id}: the same bytes`);
  }
});

t.test('the memory: a buffer of its own to transfer, or the one given', async (t) => {
  const input = new Uint8Array(await jpegOf(64, 48, { quality: 90 }));
  const own = codec.decodeRgbaOwned(input, 64, 48)!;
  t.equal(own.transferable, true, 'bytes of their own can be transferred');
  t.equal(own.data.buffer.byteLength, 64 * 48 * 4, 'the ArrayBuffer holds exactly the photo');
  const kept = new ArrayBuffer(64 * 48 * 4 + 100);
  const into = new Uint8Array(kept, 0, 64 * 48 * 4);
  const given = codec.decodeRgbaOwned(input, 64, 48, into)!;
  t.equal(given.data.buffer, kept, 'decoded into the memory given');
  t.equal(given.transferable, false, 'kept memory is not handed away');
  t.ok(given.data.equals(own.data), 'the same bytes');
  t.equal(new Uint8Array(kept)[64 * 48 * 4], 0, 'nothing written past the photo');
});

t.test('a photo that needs converting is not plain: the probe says so, the addon declines it', async (t) => {
  const base = await jpegOf(96, 64, { quality: 90 });
  const variants: Array<[string, Buffer]> = [
    ['an ICC profile', await sharp(base).withIccProfile('p3').jpeg().toBuffer()],
    ['an orientation to apply', await sharp(base).withMetadata({ orientation: 6 }).jpeg().toBuffer()],
    ['grey (one channel)', await sharp(base).toColourspace('b-w').jpeg().toBuffer()],
    ['CMYK', await sharp(base).toColourspace('cmyk').jpeg().toBuffer()],
    ['a PNG with alpha', await sharp(base).ensureAlpha(0.5).png().toBuffer()],
    ['a 16-bit PNG', await sharp(base).toColourspace('rgb16').png().toBuffer()],
    ['a grey PNG', await sharp(base).toColourspace('b-w').png().toBuffer()],
    ['a WebP with alpha', await sharp(base).ensureAlpha(0.5).webp().toBuffer()],
  ];
  for (const [name, bytes] of variants) {
    const input = new Uint8Array(bytes);
    const probe = await codec.probe(input);
    t.equal(probe.plainRgb, false, `${name}: not plain`);
    const meta = await sharp(input).metadata();
    const dst = new Uint8Array(meta.width! * meta.height! * 4);
    t.equal(binding.decodePlainRgba(input, meta.width!, meta.height!, dst), false, `${name}: the addon declines it (checks the image itself)`);
  }
  for (const [name, bytes] of [
    ['a GIF', await sharp(base).gif().toBuffer()],
    ['a TIFF', await sharp(base).tiff().toBuffer()],
  ] as const) {
    const input = new Uint8Array(bytes);
    await t.rejects(codec.probe(input), codec.UnsupportedFormatError, `${name}: not a format the service takes`);
    t.equal(binding.decodePlainRgba(input, 96, 64, new Uint8Array(96 * 64 * 4)), false, `${name}: the addon declines it too`);
  }
  const input = new Uint8Array(base);
  t.equal(binding.decodePlainRgba(input, 97, 64, new Uint8Array(97 * 64 * 4)), false, "a size other than the image's: declined");
});

t.test("bytes that do not decode: libvips' reason, coded", async (t) => {
  const whole = await jpegOf(320, 240, { quality: 90 });
  const truncated = new Uint8Array(whole.subarray(0, Math.floor(whole.length * 0.6)));
  const dst = new Uint8Array(320 * 240 * 4);
  t.throws(
    () => binding.decodePlainRgba(truncated, 320, 240, dst),
    { code: 'ERR_CUTOUT_DECODE' },
    'a truncated JPEG fails, as failOn truncated makes sharp fail',
  );
  await t.rejects(codec.decodeRgba(truncated, 50e6, 320, 240, true), 'sharp refuses it too');
  try {
    binding.decodePlainRgba(truncated, 320, 240, dst);
  } catch (err) {
    t.match((err as Error).message, /jpeg|JPEG|end|truncated/, "the message is libvips' own");
  }
  const garbage = new Uint8Array(whole);
  garbage.fill(0x5a, 200);
  t.throws(() => binding.decodePlainRgba(garbage, 320, 240, dst), { code: 'ERR_CUTOUT_DECODE' }, 'scrambled entropy data');
  t.throws(() => binding.decodePlainRgba(new Uint8Array(0), 320, 240, dst), { code: 'ERR_CUTOUT_DECODE' }, 'no bytes');
  t.throws(() => binding.decodePlainRgba(new Uint8Array([0xff, 0xd8, 0xff]), 320, 240, dst), { code: 'ERR_CUTOUT_DECODE' }, 'a bare SOI');
  // The same above the calling-thread bound (2.5 MP), where libvips' thread pool decodes.
  const big = await jpegOf(2048, 1250, { quality: 85 });
  const bigCut = new Uint8Array(big.subarray(0, Math.floor(big.length * 0.6)));
  t.throws(
    () => binding.decodePlainRgba(bigCut, 2048, 1250, new Uint8Array(2048 * 1250 * 4)),
    { code: 'ERR_CUTOUT_DECODE' },
    'a truncated 2.56 MP JPEG fails too',
  );
  // After a failure the next decode is unaffected (libvips' error buffer cleared).
  t.equal(binding.decodePlainRgba(new Uint8Array(whole), 320, 240, dst), true, 'the next photo decodes');
});

t.test('broken arguments: coded errors', async (t) => {
  const input = new Uint8Array(await jpegOf(32, 32, { quality: 90 }));
  t.throws(() => binding.decodePlainRgba(input, 32, 32, new Uint8Array(32 * 32 * 4 - 1)), { code: 'ERR_CUTOUT_BAD_LENGTH' });
  t.throws(() => binding.decodePlainRgba(input, 32, 32, new Float32Array(32 * 32) as never), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.decodePlainRgba('x' as never, 32, 32, new Uint8Array(32 * 32 * 4)), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.decodePlainRgba(input, 0, 32, new Uint8Array(0)), { code: 'ERR_CUTOUT_ARG' });
  const shared = new Uint8Array(input.length + 32 * 32 * 4);
  shared.set(input);
  t.throws(
    () => binding.decodePlainRgba(shared.subarray(0, input.length), 32, 32, shared.subarray(input.length - 8, input.length - 8 + 32 * 32 * 4)),
    { code: 'ERR_CUTOUT_ARG' },
    'overlapping input and dst',
  );
  const detached = new Uint8Array(32 * 32 * 4);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  t.throws(() => binding.decodePlainRgba(input, 32, 32, detached), { code: 'ERR_CUTOUT_DETACHED' });
});

t.test("hostile bytes: mutated and cut photos that still probe as plain get sharp's outcome, the same bytes or a failure, never a crash", async (t) => {
  const rgb = photoLike(120, 90, 11);
  const raw = { raw: { width: 120, height: 90, channels: 3 as const } };
  const bases: Array<[string, Buffer]> = [
    ['JPEG', await sharp(rgb, raw).jpeg({ quality: 85 }).toBuffer()],
    ['progressive JPEG', await sharp(rgb, raw).jpeg({ progressive: true }).toBuffer()],
    ['PNG', await sharp(rgb, raw).png().toBuffer()],
    ['WebP', await sharp(rgb, raw).webp().toBuffer()],
  ];
  let seed = 20261129;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (const [name, base] of bases) {
    const tally = { plain: 0, decoded: 0, failed: 0, differ: 0 };
    for (let i = 0; i < 100; i++) {
      const bytes = new Uint8Array(base);
      for (let k = 1 + Math.floor(rnd() * 8); k > 0; k--) bytes[Math.floor(rnd() * bytes.length)] = Math.floor(rnd() * 256);
      const input = new Uint8Array(rnd() < 0.2 ? bytes.subarray(0, Math.floor(rnd() * bytes.length)) : bytes);
      const probe = await codec.probe(input).catch(() => undefined);
      if (!probe?.plainRgb) continue;
      tally.plain++;
      const ours = (() => {
        try {
          return codec.decodeRgbaOwned(input, probe.width, probe.height) ?? 'declined';
        } catch (err) {
          return err as Error & { code?: string };
        }
      })();
      const theirs = await codec.decodeRgba(input, 50e6, probe.width, probe.height, true).catch((err: Error) => err);
      if (theirs instanceof Error) {
        if (ours instanceof Error && ours.code === 'ERR_CUTOUT_DECODE') tally.failed++;
        else tally.differ++;
      } else if (ours !== 'declined' && !(ours instanceof Error) && ours.data.equals(theirs.data)) tally.decoded++;
      else tally.differ++;
    }
    t.ok(tally.plain >= 50, `${name}: ${tally.plain} of 100 mutations still probe as plain`);
    t.equal(tally.differ, 0, `${name}: ${tally.decoded} decoded to sharp's bytes, ${tally.failed} failed as sharp's did, none otherwise`);
  }
});
