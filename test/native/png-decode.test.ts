// The addon's own PNG decoder (native/src/png_decode.h), which decodePlainRgba tries first for a PNG:
// an 8-bit RGB PNG that checks out whole comes back as the very pixels put in (every filter type,
// every width's tail, the stream in any number of IDATs, metadata chunks around it), which are also
// libvips' bytes for it; every other PNG and every broken one is declined, and then decodePlainRgba
// gives libvips' outcome for it (the same bytes, or libvips' error), never a crash.
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import sharp from 'sharp';
import { loadBinding } from '../../src/native/binding.js';
import * as codec from '../../src/worker/codec.js';
import { EVAL_SKIP, evalImage, readManifest } from '../helpers/core-fixtures.js';
import { seededBytes } from '../helpers/images.js';

const binding = loadBinding();

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b;
}

/** One chunk: length, type, data, CRC (`badCrc`: off by one). */
function chunk(type: string, data: Uint8Array = new Uint8Array(0), badCrc = false): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32(data.length), body, u32(crc32(body) + (badCrc ? 1 : 0))]);
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(w: number, h: number, depth = 8, colour = 2, interlace = 0): Buffer {
  return chunk('IHDR', Buffer.concat([u32(w), u32(h), Buffer.from([depth, colour, 0, 0, interlace])]));
}

function paeth(a: number, b: number, c: number): number {
  const pa = Math.abs(b - c),
    pb = Math.abs(a - c),
    pc = Math.abs(a + b - 2 * c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** RGB rows filtered as PNG encoders do, row y with filters(y), each row led by its filter byte. */
function filtered(rgb: Uint8Array, w: number, h: number, filter: (y: number) => number): Buffer {
  const stride = w * 3;
  const out = Buffer.alloc(h * (stride + 1));
  for (let y = 0; y < h; y++) {
    const f = filter(y);
    out[y * (stride + 1)] = f;
    for (let i = 0; i < stride; i++) {
      const x = rgb[y * stride + i]!;
      const a = i >= 3 ? rgb[y * stride + i - 3]! : 0;
      const b = y > 0 ? rgb[(y - 1) * stride + i]! : 0;
      const c = y > 0 && i >= 3 ? rgb[(y - 1) * stride + i - 3]! : 0;
      const pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][f]!;
      out[y * (stride + 1) + 1 + i] = (x - pred) & 255;
    }
  }
  return out;
}

interface PngParts {
  before?: Buffer[];
  idat?: (stream: Buffer) => Buffer[];
  after?: Buffer[];
  tail?: Buffer;
}

/** A PNG of `rgb`, its stream cut into IDATs by parts.idat (one by default), chunks around it. */
function pngOf(rgb: Uint8Array, w: number, h: number, filter: (y: number) => number, parts: PngParts = {}): Buffer {
  const stream = zlib.deflateSync(filtered(rgb, w, h, filter));
  const idats = (parts.idat ?? ((s) => [chunk('IDAT', s)]))(stream);
  return Buffer.concat([SIGNATURE, ihdr(w, h), ...(parts.before ?? []), ...idats, ...(parts.after ?? []), chunk('IEND'), parts.tail ?? Buffer.alloc(0)]);
}

function rgbaOf(rgb: Uint8Array): Buffer {
  const out = Buffer.alloc((rgb.length / 3) * 4);
  for (let i = 0, j = 0; i < rgb.length; i += 3, j += 4) {
    out[j] = rgb[i]!;
    out[j + 1] = rgb[i + 1]!;
    out[j + 2] = rgb[i + 2]!;
    out[j + 3] = 255;
  }
  return out;
}

function ours(input: Uint8Array, w: number, h: number): Buffer | undefined {
  const dst = Buffer.alloc(w * h * 4);
  return binding.decodePlainPng(input, w, h, dst) ? dst : undefined;
}

/** libvips' decode (sharp's, as codec.decodeRgba gives it at full size), or its error. */
async function bySharp(input: Uint8Array, w: number, h: number): Promise<Buffer | Error> {
  return codec.decodeRgba(input, 50e6, w, h, true).then(
    (raw) => raw.data,
    (err: Error) => err,
  );
}

/** decodePlainRgba's outcome: its bytes, false (not plain), or its error. */
function byAddon(input: Uint8Array, w: number, h: number): Buffer | false | Error {
  const dst = Buffer.alloc(w * h * 4);
  try {
    return binding.decodePlainRgba(input, w, h, dst) ? dst : false;
  } catch (err) {
    return err as Error;
  }
}

t.test("every filter type and every width's tail: the pixels put in, and libvips' bytes", async (t) => {
  const filters: Array<[string, (y: number) => number]> = [
    ['None', () => 0],
    ['Sub', () => 1],
    ['Up', () => 2],
    ['Average', () => 3],
    ['Paeth', () => 4],
    ['all five, row by row', (y) => y % 5],
    ['all five, first row Paeth', (y) => (4 + y) % 5],
  ];
  let seed = 1;
  for (const [w, h] of [
    [1, 1],
    [2, 3],
    [3, 2],
    [4, 5],
    [5, 9],
    [17, 7],
    [64, 12],
    [203, 31],
  ] as const) {
    const rgb = seededBytes(w * h * 3, seed++);
    const want = rgbaOf(rgb);
    for (const [name, filter] of filters) {
      const png = new Uint8Array(pngOf(rgb, w, h, filter));
      t.same(ours(png, w, h), want, `${w}×${h}, ${name}: the pixels put in`);
      const vips = await bySharp(png, w, h);
      t.ok(Buffer.isBuffer(vips) && vips.equals(want), `${w}×${h}, ${name}: libvips agrees`);
    }
  }
});

t.test("the stream in many IDATs and metadata around it: decoded, and libvips' bytes", async (t) => {
  const w = 41,
    h = 23;
  const rgb = seededBytes(w * h * 3, 99);
  const want = rgbaOf(rgb);
  const split = (size: number) => (s: Buffer) => {
    const out: Buffer[] = [];
    for (let i = 0; i < s.length; i += size) out.push(chunk('IDAT', s.subarray(i, i + size)));
    return out;
  };
  const metadata = [
    chunk('gAMA', u32(45455)),
    chunk('cHRM', Buffer.concat([31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000].map(u32))),
    chunk('sRGB', Buffer.from([0])),
    chunk('sBIT', Buffer.from([5, 6, 5])),
    chunk('bKGD', Buffer.from([0, 10, 0, 20, 0, 30])),
    chunk('pHYs', Buffer.concat([u32(2835), u32(2835), Buffer.from([1])])),
    chunk('tEXt', Buffer.from('Comment\0made by a test', 'latin1')),
    chunk('zTXt', Buffer.concat([Buffer.from('Comment\0\0', 'latin1'), zlib.deflateSync(Buffer.from('zipped'))])),
    chunk('iTXt', Buffer.from('Title\0\0\0\0\0a title', 'latin1')),
    chunk('tIME', Buffer.from([0x07, 0xea, 11, 29, 10, 0, 0])),
  ];
  const cases: Array<[string, PngParts]> = [
    ['one-byte IDATs', { idat: split(1) }],
    ['seven-byte IDATs', { idat: split(7) }],
    ['empty IDATs between', { idat: (s) => [chunk('IDAT'), chunk('IDAT', s.subarray(0, 100)), chunk('IDAT'), chunk('IDAT', s.subarray(100)), chunk('IDAT')] }],
    ['every metadata chunk before the image', { before: metadata }],
    ['text after the image', { after: [chunk('tEXt', Buffer.from('After\0the image', 'latin1'))] }],
  ];
  for (const [name, parts] of cases) {
    const png = new Uint8Array(pngOf(rgb, w, h, (y) => y % 5, parts));
    t.same(ours(png, w, h), want, `${name}: the pixels put in`);
    const vips = await bySharp(png, w, h);
    t.ok(Buffer.isBuffer(vips) && vips.equals(want), `${name}: libvips gives the same pixels (the chunks change none)`);
  }
});

/** Each PNG decoded by the addon's PNG decoder: libvips' bytes, directly and through decodeRgbaOwned. */
async function decodedAsLibvips(t: Test, inputs: Array<[string, Uint8Array]>): Promise<void> {
  for (const [name, input] of inputs) {
    const probe = await codec.probe(input);
    t.equal(probe.plainRgb, true, `${name}: plain`);
    const mine = ours(input, probe.width, probe.height);
    t.ok(mine, `${name}: decoded by the addon's PNG decoder`);
    const vips = await bySharp(input, probe.width, probe.height);
    t.ok(Buffer.isBuffer(vips) && mine?.equals(vips), `${name}: the same bytes as libvips'`);
    t.ok(codec.decodeRgbaOwned(input, probe.width, probe.height)?.data.equals(vips as Buffer), `${name}: and through decodeRgbaOwned`);
  }
}

t.test("sharp's PNGs: decoded here, libvips' bytes", async (t) => {
  const rgb = seededBytes(150 * 100 * 3, 5);
  const raw = { raw: { width: 150, height: 100, channels: 3 as const } };
  const inputs: Array<[string, Uint8Array]> = [];
  for (const [level, adaptiveFiltering] of [
    [0, false],
    [6, true],
    [9, true],
  ] as const) {
    inputs.push([
      `sharp, level ${level}${adaptiveFiltering ? ', adaptive filters' : ''}`,
      new Uint8Array(await sharp(rgb, raw).png({ compressionLevel: level, adaptiveFiltering }).toBuffer()),
    ]);
  }
  await decodedAsLibvips(t, inputs);
});

t.test("the real PNGs of the dev set (other encoders' files): decoded here, libvips' bytes", { skip: EVAL_SKIP }, async (t) => {
  const rows = readManifest()
    .filter((row) => row.image_path.endsWith('.png'))
    .slice(0, 4);
  t.ok(rows.length >= 3, 'some dev PNGs');
  await decodedAsLibvips(
    t,
    rows.map((row) => [row.id, new Uint8Array(evalImage(row.id))]),
  );
});

t.test('any other PNG, and any broken one, is left to libvips: its outcome, never a crash', async (t) => {
  const w = 33,
    h = 17;
  const rgb = seededBytes(w * h * 3, 3);
  const stream = zlib.deflateSync(filtered(rgb, w, h, (y) => y % 5));
  const good = pngOf(rgb, w, h, (y) => y % 5);
  const body = good.subarray(SIGNATURE.length + 25, good.length - 12); // the IDAT
  const iend = chunk('IEND');
  const build = (...parts: Buffer[]) => new Uint8Array(Buffer.concat([SIGNATURE, ...parts]));
  const base = new Uint8Array(good);
  const raw = { raw: { width: w, height: h, channels: 3 as const } };
  const rgbBytes = Buffer.from(rgb);
  const extraRow = zlib.deflateSync(Buffer.concat([filtered(rgb, w, h, () => 0), Buffer.alloc(w * 3 + 1)]));
  const shortStream = zlib.deflateSync(filtered(rgb, w, h - 1, () => 0));
  const badFilter = filtered(rgb, w, h, () => 1);
  badFilter[5 * (w * 3 + 1)] = 5;
  const cases: Array<[string, Uint8Array]> = [
    ['RGBA', new Uint8Array(await sharp(rgbBytes, raw).ensureAlpha(0.5).png().toBuffer())],
    ['grey', new Uint8Array(await sharp(rgbBytes, raw).toColourspace('b-w').png().toBuffer())],
    ['palette', new Uint8Array(await sharp(rgbBytes, raw).png({ palette: true }).toBuffer())],
    ['16-bit', new Uint8Array(await sharp(rgbBytes, raw).toColourspace('rgb16').png().toBuffer())],
    ['interlaced', new Uint8Array(await sharp(rgbBytes, raw).png({ progressive: true }).toBuffer())],
    ['an ICC profile', new Uint8Array(await sharp(rgbBytes, raw).withIccProfile('p3').png().toBuffer())],
    ['transparency (tRNS)', build(ihdr(w, h), chunk('tRNS', Buffer.from([0, 1, 0, 2, 0, 3])), body, iend)],
    [
      'an EXIF orientation (eXIf)',
      build(ihdr(w, h), chunk('eXIf', Buffer.from('MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0', 'latin1')), body, iend),
    ],
    ['a chunk it does not know', build(ihdr(w, h), chunk('prVt', Buffer.from('x')), body, iend)],
    ['a bad IDAT CRC', build(ihdr(w, h), chunk('IDAT', stream, true), iend)],
    ['a bad text CRC', build(ihdr(w, h), chunk('tEXt', Buffer.from('a\0b'), true), body, iend)],
    ['a bad IHDR CRC', build(Buffer.concat([ihdr(w, h).subarray(0, 21), Buffer.from([0, 0, 0, 0])]), body, iend)],
    ['an IHDR of 12 bytes', build(chunk('IHDR', Buffer.concat([u32(w), u32(h), Buffer.from([8, 2, 0, 0])])), body, iend)],
    ['filter type 5', build(ihdr(w, h), chunk('IDAT', zlib.deflateSync(badFilter)), iend)],
    ['a stream one row longer', build(ihdr(w, h), chunk('IDAT', extraRow), iend)],
    ['a stream one row short', build(ihdr(w, h), chunk('IDAT', shortStream), iend)],
    ['a stream with its adler32 wrong', build(ihdr(w, h), chunk('IDAT', Buffer.concat([stream.subarray(0, -1), Buffer.from([stream.at(-1)! ^ 1])])), iend)],
    ['raw deflate, no zlib header', build(ihdr(w, h), chunk('IDAT', zlib.deflateRawSync(filtered(rgb, w, h, () => 0))), iend)],
    [
      'a chunk between IDATs',
      build(ihdr(w, h), chunk('IDAT', stream.subarray(0, 50)), chunk('tEXt', Buffer.from('a\0b')), chunk('IDAT', stream.subarray(50)), iend),
    ],
    ['bytes after IEND', new Uint8Array(Buffer.concat([good, Buffer.from('trailing')]))],
    ['no IEND', base.subarray(0, base.length - 12)],
    ['IEND cut short', base.subarray(0, base.length - 3)],
    ['cut inside the IDAT', base.subarray(0, 33 + Math.floor(body.length / 2))],
    ['cut after the IHDR', base.subarray(0, 33)],
    ['the signature alone', base.subarray(0, 8)],
    ['no IDAT', build(ihdr(w, h), iend)],
    ['a claimed 4000×3000 with this stream', build(ihdr(4000, 3000), body, iend)],
  ];
  for (const [name, input] of cases) {
    const probe = await codec.probe(input).catch(() => undefined);
    const [pw, ph] = probe ? [probe.header.width, probe.header.height] : [w, h];
    t.equal(ours(input, pw, ph), undefined, `${name}: declined`);
    const addon = byAddon(input, pw, ph);
    const vips = await bySharp(input, pw, ph);
    if (addon === false) {
      t.pass(`${name}: not plain for libvips either`);
    } else if (addon instanceof Error) {
      t.ok(vips instanceof Error, `${name}: libvips refuses it, as sharp does`);
      t.equal((addon as Error & { code?: string }).code, 'ERR_CUTOUT_DECODE', `${name}: a coded error`);
    } else {
      t.ok(Buffer.isBuffer(vips) && addon.equals(vips), `${name}: libvips decodes it, as sharp does: the same bytes`);
    }
  }
  t.equal(ours(base, w + 1, h), undefined, "a size other than the file's: declined");
  t.same(ours(base, w, h), rgbaOf(rgb), 'and the good file still decodes');
});

t.test("mutated PNGs: decoded only when every check holds, then libvips' bytes", async (t) => {
  const w = 57,
    h = 29;
  const rgb = seededBytes(w * h * 3, 17);
  const base = pngOf(rgb, w, h, (y) => y % 5, { before: [chunk('tEXt', Buffer.from('Comment\0some words'))] });
  let seed = 20261129;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const tally = { decoded: 0, declined: 0 };
  for (let i = 0; i < 300; i++) {
    const bytes = new Uint8Array(base);
    for (let k = 1 + Math.floor(rnd() * 4); k > 0; k--) bytes[Math.floor(rnd() * bytes.length)] = Math.floor(rnd() * 256);
    const input = rnd() < 0.2 ? bytes.subarray(0, Math.floor(rnd() * bytes.length)) : bytes;
    const mine = ours(input, w, h);
    if (!mine) {
      tally.declined++;
      continue;
    }
    tally.decoded++;
    const vips = await bySharp(input, w, h);
    if (!Buffer.isBuffer(vips) || !vips.equals(mine)) t.fail(`mutation ${i}: decoded, but not libvips' bytes`);
  }
  t.ok(tally.declined > 250, `nearly every mutation declined (a CRC covers every chunk): ${JSON.stringify(tally)}`);
});

t.test('broken arguments: coded errors', async (t) => {
  const input = new Uint8Array(pngOf(seededBytes(8 * 8 * 3, 1), 8, 8, () => 0));
  t.throws(() => binding.decodePlainPng(input, 8, 8, new Uint8Array(8 * 8 * 4 - 1)), { code: 'ERR_CUTOUT_BAD_LENGTH' });
  t.throws(() => binding.decodePlainPng(input, 0, 8, new Uint8Array(0)), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.decodePlainPng('x' as never, 8, 8, new Uint8Array(8 * 8 * 4)), { code: 'ERR_CUTOUT_ARG' });
  const shared = new Uint8Array(input.length + 8 * 8 * 4);
  shared.set(input);
  t.throws(
    () => binding.decodePlainPng(shared.subarray(0, input.length), 8, 8, shared.subarray(input.length - 4, input.length - 4 + 8 * 8 * 4)),
    { code: 'ERR_CUTOUT_ARG' },
    'overlapping input and dst',
  );
  t.equal(binding.decodePlainPng(new Uint8Array(0), 8, 8, new Uint8Array(8 * 8 * 4)), false, 'no bytes: declined');
  t.equal(binding.decodePlainPng(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]), 8, 8, new Uint8Array(8 * 8 * 4)), false, 'a JPEG: declined');
});
