// The addon's PNG encoder: every pixel survives a decode, the file is well formed, the bytes do not depend on the thread count, and bad arguments are refused with coded errors.
import zlib from 'node:zlib';
import sharp from 'sharp';
import { unzipSync } from 'fflate';
import t, { type Test } from 'tap';
import { loadBinding, type PngEncodeOptions } from '../../src/native/binding.js';
import { encodePng, encodeZip } from '../../src/worker/codec.js';

const binding = loadBinding();
type Channels = 1 | 2 | 3 | 4;
// native/src/png_encode.h kPngStripBytes: strips are whole rows covering at least this many raw bytes.
const STRIP_BYTES = 1 << 20;
const stripRows = (w: number, c: number): number => Math.ceil(STRIP_BYTES / (w * c));

// Noise on a gradient with transparent-looking runs of zeros, so every filter and strategy has work to do.
function pattern(w: number, h: number, c: number, seed = 1): Uint8Array {
  const out = new Uint8Array(w * h * c);
  let s = seed;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const zero = (x + 3 * y) % 97 < 40;
      for (let k = 0; k < c; k++) {
        s = (Math.imul(s, 1103515245) + 12345) >>> 0;
        out[(y * w + x) * c + k] = zero ? 0 : (x + 2 * y + 50 * k + (s >>> 29)) & 255;
      }
    }
  }
  return out;
}

/** Decoded pixels as sharp hands them back: grey widened to RGB, grey+alpha to RGBA. */
async function decode(png: Uint8Array): Promise<{ data: Buffer; channels: number; width: number; height: number }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return { data, channels: info.channels, width: info.width, height: info.height };
}

function widen(px: Uint8Array, c: Channels): Uint8Array {
  if (c > 2) return px;
  const n = px.length / c;
  const out = new Uint8Array(n * (c + 2));
  for (let i = 0; i < n; i++) {
    const v = px[i * c]!;
    out.set(c === 1 ? [v, v, v] : [v, v, v, px[i * c + 1]!], i * (c + 2));
  }
  return out;
}

interface Chunk {
  type: string;
  data: Buffer;
}

/** Walk the chunks, checking the signature and every CRC. */
function chunks(t: Test, png: Uint8Array): Chunk[] {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  t.same([...b.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'signature');
  const out: Chunk[] = [];
  let at = 8;
  while (at < b.length) {
    const len = b.readUInt32BE(at);
    const type = b.toString('latin1', at + 4, at + 8);
    const data = b.subarray(at + 8, at + 8 + len);
    if (b.readUInt32BE(at + 8 + len) !== zlib.crc32(b.subarray(at + 4, at + 8 + len))) t.fail(`CRC of ${type} chunk at ${at}`);
    out.push({ type, data });
    at += 12 + len;
  }
  t.equal(at, b.length, 'chunks end at the end of the file');
  return out;
}

/** The rows as the encoder filters them: None for the first, Up for the rest. */
function filteredRows(px: Uint8Array, w: number, h: number, c: number): Buffer {
  const stride = w * c;
  const out = Buffer.alloc(h * (stride + 1));
  for (let y = 0; y < h; y++) {
    const o = y * (stride + 1);
    out[o] = y === 0 ? 0 : 2;
    for (let i = 0; i < stride; i++) out[o + 1 + i] = (px[y * stride + i]! - (y === 0 ? 0 : px[(y - 1) * stride + i]!)) & 255;
  }
  return out;
}

const COLOUR_TYPE = { 1: 0, 2: 4, 3: 2, 4: 6 } as const;
const OPTIONS: PngEncodeOptions[] = [
  { level: 4, threads: 1, strategy: 'rle' },
  { level: 4, threads: 1 },
  { level: 0, threads: 1 },
  { level: 9, threads: 1, strategy: 'default' },
];

// [width, height]: 1×1, a column, a row, odd widths, several strips, and heights at a strip boundary.
function sizes(c: Channels): Array<[number, number]> {
  const boundary = stripRows(1024, c);
  return [[1, 1], [1, 1000], [5000, 1], [333, 77], [1021, 3 * stripRows(1021, c) + 5], [1024, boundary], [1024, boundary + 1], [1024, 2 * boundary]];
}

t.test('every pixel decodes back for 1 to 4 channels, at every size', async (t) => {
  for (const c of [1, 2, 3, 4] as const) {
    for (const [w, h] of sizes(c)) {
      const px = pattern(w, h, c, w + h + c);
      const png = binding.encodePng(px, w, h, c, { level: 4, threads: 2, strategy: 'rle' });
      const got = await decode(png);
      t.same([got.width, got.height, got.channels], [w, h, c < 3 ? c + 2 : c], `${w}x${h}x${c} size`);
      t.ok(got.data.equals(widen(px, c)), `${w}x${h}x${c} pixels`);
    }
  }
});

t.test('IHDR, one IDAT per strip holding the filtered rows, IEND', async (t) => {
  for (const c of [1, 2, 3, 4] as const) {
    for (const [w, h] of sizes(c)) {
      const px = pattern(w, h, c, 7);
      for (const options of OPTIONS) {
        const name = `${w}x${h}x${c} ${JSON.stringify(options)}`;
        const list = chunks(t, binding.encodePng(px, w, h, c, { ...options, threads: 3 }));
        const ihdr = list[0]!;
        t.equal(ihdr.type, 'IHDR', `${name}: IHDR first`);
        t.same([ihdr.data.readUInt32BE(0), ihdr.data.readUInt32BE(4), ...ihdr.data.subarray(8)], [w, h, 8, COLOUR_TYPE[c], 0, 0, 0], `${name}: IHDR fields`);
        t.same(list.at(-1), { type: 'IEND', data: Buffer.alloc(0) }, `${name}: IEND last`);
        const idat = list.slice(1, -1);
        t.ok(idat.every((k) => k.type === 'IDAT'), `${name}: only IDAT between`);
        t.equal(idat.length, Math.ceil(h / stripRows(w, c)), `${name}: one IDAT per strip`);
        // inflateSync checks the zlib header and the combined adler32 too.
        const rows = zlib.inflateSync(Buffer.concat(idat.map((k) => k.data)));
        t.ok(rows.equals(filteredRows(px, w, h, c)), `${name}: IDAT inflates to the filtered rows`);
      }
    }
  }
});

t.test('the same bytes for 1, 2 and 7 threads', async (t) => {
  for (const c of [1, 4] as const) {
    for (const [w, h] of sizes(c)) {
      const px = pattern(w, h, c, 3);
      for (const options of OPTIONS) {
        const one = Buffer.from(binding.encodePng(px, w, h, c, { ...options, threads: 1 }));
        for (const threads of [2, 7]) {
          t.ok(one.equals(binding.encodePng(px, w, h, c, { ...options, threads })), `${w}x${h}x${c} ${JSON.stringify(options)}: threads ${threads}`);
        }
      }
    }
  }
});

t.test('reads a view at its byteOffset', async (t) => {
  const backing = pattern(40, 1, 1, 9);
  const view = backing.subarray(8, 8 + 4 * 2 * 3);
  const got = await decode(binding.encodePng(view, 4, 2, 3, { level: 4, threads: 1 }));
  t.ok(got.data.equals(view));
});

t.test('the result owns its whole ArrayBuffer and transfers', async (t) => {
  const png = binding.encodePng(pattern(64, 48, 4), 64, 48, 4, { level: 4, threads: 2 });
  t.equal(png.byteOffset, 0);
  t.equal(png.byteLength, png.buffer.byteLength);
  const copy = Buffer.from(png);
  const moved = structuredClone(png, { transfer: [png.buffer as ArrayBuffer] });
  t.equal(png.buffer.byteLength, 0, 'source detached');
  t.ok(copy.equals(moved), 'bytes intact');
});

t.test('refuses bad arguments with coded errors', async (t) => {
  const px = new Uint8Array(2 * 2 * 3);
  const ok: PngEncodeOptions = { level: 4, threads: 1 };
  const encode = (...args: unknown[]) => () => (binding.encodePng as (...a: unknown[]) => Uint8Array)(...args);
  t.throws(encode(new Uint8Array(11), 2, 2, 3, ok), { name: 'TypeError', code: 'ERR_CUTOUT_BAD_LENGTH', message: /Expected 12 bytes \(2x2x3\) for pixels but received 11/ });
  t.throws(encode(new Uint8Array(13), 2, 2, 3, ok), { name: 'TypeError', code: 'ERR_CUTOUT_BAD_LENGTH' });
  t.throws(encode(px, 2, 2, 5, ok), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /channels/ });
  t.throws(encode(px, 2, 2, 0, ok), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /channels/ });
  t.throws(encode(px, 0, 2, 3, ok), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /width/ });
  t.throws(encode(px, 2, 2.5, 3, ok), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /height/ });
  t.throws(encode(px, 2, 2, 3, { level: 10, threads: 1 }), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /options\.level/ });
  t.throws(encode(px, 2, 2, 3, { level: -1, threads: 1 }), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /options\.level/ });
  t.throws(encode(px, 2, 2, 3, { level: 4, threads: 0 }), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /options\.threads/ });
  t.throws(encode(px, 2, 2, 3, { level: 4, threads: 65 }), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /options\.threads/ });
  t.throws(encode(px, 2, 2, 3, { level: 4 }), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /options\.threads/ });
  t.throws(encode(px, 2, 2, 3, { level: 4, threads: 1, strategy: 'zopfli' }), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /options\.strategy/ });
  t.throws(encode(px, 2, 2, 3), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /options/ });
  t.throws(encode([0, 0, 0], 1, 1, 3, ok), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /Uint8Array for pixels/ });
  t.throws(encode(new Float32Array(12), 2, 2, 3, ok), { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /Uint8Array for pixels/ });
  t.throws(encode('pixels', 2, 2, 3, ok), { name: 'TypeError', code: 'ERR_CUTOUT_ARG' });
  const detached = new Uint8Array(12);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  // napi_util.h reports a detached buffer as a plain Error (a state, not a type), like the session does.
  t.throws(encode(detached, 2, 2, 3, ok), { code: 'ERR_CUTOUT_DETACHED', message: /pixels is detached/ });
});

t.test('worker/codec: encodePng and the ZIP alpha.png come from the addon', async (t) => {
  const [w, h] = [301, 203];
  const rgba = Buffer.from(pattern(w, h, 4, 5));
  const png = await encodePng({ data: rgba, width: w, height: h, channels: 4 });
  t.equal(png.contentType, 'image/png');
  t.ok(Buffer.from(png.data).equals(Buffer.from(binding.encodePng(rgba, w, h, 4, { level: 4, threads: 1, strategy: 'rle' }))), 'level 4, rle');
  t.ok(Buffer.from(png.data).equals(Buffer.from((await encodePng({ data: rgba, width: w, height: h, channels: 4 }, { threads: 4 })).data)), 'threads change nothing');
  t.ok((await decode(png.data)).data.equals(rgba), 'RGBA pixels');
  const alpha = Buffer.alloc(w * h);
  for (let i = 0; i < alpha.length; i++) alpha[i] = rgba[4 * i + 3]!;
  const matte = await encodePng({ data: alpha, width: w, height: h, channels: 1 });
  t.ok((await decode(matte.data)).data.equals(widen(alpha, 1)), 'grey pixels');
  const zip = unzipSync((await encodeZip({ data: rgba, width: w, height: h, channels: 4 })).data);
  t.ok(Buffer.from(zip['alpha.png']!).equals(Buffer.from(matte.data)), 'alpha.png is the matte encoded the same way');
});
