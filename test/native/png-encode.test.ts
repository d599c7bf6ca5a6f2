// The addon's PNG encoder: every pixel survives a decode, the file is well formed, the bytes do not depend on the thread count, and bad arguments are refused with coded errors.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { unzipSync } from 'fflate';
import t, { type Test } from 'tap';
import { loadBinding, type PngEncodeOptions } from '../../src/native/binding.js';
import { EVAL_DIR, EVAL_SKIP } from '../helpers/eval-photos.js';
import { encodePng, encodeZip } from '../../src/worker/codec.js';
import { seededBytes } from '../helpers/images.js';

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
  return [
    [1, 1],
    [1, 1000],
    [5000, 1],
    [333, 77],
    [1021, 3 * stripRows(1021, c) + 5],
    [1024, boundary],
    [1024, boundary + 1],
    [1024, 2 * boundary],
  ];
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
        t.ok(
          idat.every((k) => k.type === 'IDAT'),
          `${name}: only IDAT between`,
        );
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
  const encode =
    (...args: unknown[]) =>
    () =>
      (binding.encodePng as (...a: unknown[]) => Uint8Array)(...args);
  t.throws(encode(new Uint8Array(11), 2, 2, 3, ok), {
    name: 'TypeError',
    code: 'ERR_CUTOUT_BAD_LENGTH',
    message: /Expected 12 bytes \(2x2x3\) for pixels but received 11/,
  });
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
  t.ok(Buffer.from(png.data).equals(Buffer.from(binding.encodePng(rgba, w, h, 4, { level: 4, threads: 1, strategy: 'fast' }))), 'level 4, fast');
  t.ok(
    Buffer.from(png.data).equals(Buffer.from((await encodePng({ data: rgba, width: w, height: h, channels: 4 }, { threads: 4 })).data)),
    'threads change nothing',
  );
  t.ok((await decode(png.data)).data.equals(rgba), 'RGBA pixels');
  const alpha = Buffer.alloc(w * h);
  for (let i = 0; i < alpha.length; i++) alpha[i] = rgba[4 * i + 3]!;
  const matte = await encodePng({ data: alpha, width: w, height: h, channels: 1 });
  t.ok((await decode(matte.data)).data.equals(widen(alpha, 1)), 'grey pixels');
  const zip = unzipSync((await encodeZip({ data: rgba, width: w, height: h, channels: 4 })).data);
  t.ok(Buffer.from(zip['alpha.png']!).equals(Buffer.from(matte.data)), 'alpha.png is the matte encoded the same way');
});

// --- strategy 'fast' (native/src/png_fast.h): its own filters and deflate, so checked by decoding ---

const FAST: PngEncodeOptions = { level: 4, threads: 1, strategy: 'fast' };

/** Undo the PNG filters (any of the five, per row) of inflated IDAT data; also which types were used. */
function unfilter(rows: Buffer, w: number, h: number, c: number): { pixels: Uint8Array; types: Set<number> } {
  const stride = w * c;
  const out = new Uint8Array(h * stride);
  const types = new Set<number>();
  for (let y = 0; y < h; y++) {
    const type = rows[y * (stride + 1)]!;
    types.add(type);
    for (let i = 0; i < stride; i++) {
      const x = rows[y * (stride + 1) + 1 + i]!;
      const a = i >= c ? out[y * stride + i - c]! : 0;
      const b = y > 0 ? out[(y - 1) * stride + i]! : 0;
      const d = i >= c && y > 0 ? out[(y - 1) * stride + i - c]! : 0;
      const pa = Math.abs(b - d),
        pb = Math.abs(a - d),
        pc = Math.abs(a + b - 2 * d);
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : d;
      const predict = [0, a, b, (a + b) >> 1, paeth][type];
      if (predict === undefined) throw new Error(`row ${y}: filter type ${type}`);
      out[y * stride + i] = (x + predict) & 255;
    }
  }
  return { pixels: out, types };
}

/** The same bytes as stored deflate blocks would take: the most the encoder may write. */
function storedSize(w: number, h: number, c: number): number {
  const rows = stripRows(w, c);
  let size = 8 + 25 + 12 + 2 + 4; // signature, IHDR, IEND, zlib header, adler32
  for (let y = 0; y < h; y += rows) {
    const raw = Math.min(rows, h - y) * (w * c + 1);
    size += 12 + raw + 5 * Math.ceil(raw / 65535);
  }
  return size;
}

// Synthetic images that stress different paths: runs everywhere, no runs at all, smooth ramps.
const GENERATORS: Record<string, (w: number, h: number, c: number, seed: number) => Uint8Array> = {
  noise: (w, h, c, seed) => seededBytes(w * h * c, seed),
  transparent: (w, h, c) => new Uint8Array(w * h * c),
  gradient: (w, h, c) => {
    const out = new Uint8Array(w * h * c);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let k = 0; k < c; k++) out[(y * w + x) * c + k] = (3 * x + 5 * y + 60 * k) & 255;
    return out;
  },
  pattern: (w, h, c, seed) => pattern(w, h, c, seed),
  mixed: (w, h, c, seed) => mixedRows(w, h, c, seed),
};

// Rows that each filter wins, among rows of zeros: spans of 8 pixels alternately noise and flat, then
// a row that copies the noise and is another flat value over the flat spans (Paeth: Up misses the flat
// spans, Sub the noisy ones), a ramp (Sub), the ramp again (Up), and zeros under the ramp. The encoder
// writes Paeth's residuals while it costs the filters and rewrites a row where another wins, but not a
// row of zeros under zeros.
function mixedRows(w: number, h: number, c: number, seed: number): Uint8Array {
  const stride = w * c;
  const out = new Uint8Array(w * h * c);
  const noise = seededBytes(w * h * c, seed);
  for (let y = 0; y < h; y++) {
    const at = y * stride;
    const kind = y % 6;
    for (let i = 0; i < stride; i++) {
      const span = Math.floor(i / c / 8);
      if (kind === 2) out[at + i] = span % 2 === 0 ? noise[at + i]! : 100 + (span % 50);
      else if (kind === 3) out[at + i] = span % 2 === 0 ? out[at - stride + i]! : 200 - (span % 50);
      else if (kind === 4) out[at + i] = (3 * Math.floor(i / c) + 7) & 255;
      else if (kind === 5) out[at + i] = out[at - stride + i]!;
    }
  }
  return out;
}

// Widths that are not multiples of 32 (the SIMD width) around it, a column, a row, several strips.
function fastSizes(c: Channels): Array<[number, number]> {
  return [...sizes(c), [31, 17], [33, 9], [2, 3], [64, 2]];
}

t.test("'fast': every pixel decodes back (sharp) for 1 to 4 channels, every image and size", async (t) => {
  for (const c of [1, 2, 3, 4] as const) {
    for (const [name, make] of Object.entries(GENERATORS)) {
      for (const [w, h] of fastSizes(c)) {
        const px = make(w, h, c, w + h + c);
        const png = binding.encodePng(px, w, h, c, { ...FAST, threads: 2 });
        const got = await decode(png);
        const id = `${name} ${w}x${h}x${c}`;
        if (!(got.width === w && got.height === h && got.channels === (c < 3 ? c + 2 : c))) t.fail(`${id}: size ${got.width}x${got.height}x${got.channels}`);
        else if (!got.data.equals(widen(px, c))) t.fail(`${id}: pixels differ`);
        else t.pass(id);
      }
    }
  }
});

t.test("'fast': one IDAT per strip, whose rows inflate and unfilter to the pixels; never larger than stored", async (t) => {
  for (const c of [1, 2, 3, 4] as const) {
    for (const [name, make] of Object.entries(GENERATORS)) {
      for (const [w, h] of fastSizes(c)) {
        const px = make(w, h, c, 11);
        for (const level of [4, 0]) {
          const id = `${name} ${w}x${h}x${c} level ${level}`;
          const png = binding.encodePng(px, w, h, c, { ...FAST, level, threads: 3 });
          const list = chunks(t, png);
          const idat = list.slice(1, -1);
          t.equal(list[0]!.type, 'IHDR', `${id}: IHDR first`);
          t.equal(idat.length, Math.ceil(h / stripRows(w, c)), `${id}: one IDAT per strip`);
          t.ok(
            idat.every((k) => k.type === 'IDAT'),
            `${id}: only IDAT between`,
          );
          // inflateSync checks the zlib header and the adler32 too.
          const { pixels, types } = unfilter(zlib.inflateSync(Buffer.concat(idat.map((k) => k.data))), w, h, c);
          t.ok(Buffer.from(pixels).equals(px), `${id}: rows unfilter to the pixels`);
          t.ok(
            [...types].every((k) => k === 1 || k === 2 || k === 4),
            `${id}: filters Sub, Up, Paeth only (${[...types]})`,
          );
          if (name === 'mixed' && w >= 64 && h >= 12) t.same([...types].sort(), [1, 2, 4], `${id}: each filter wins a row`);
          t.ok(png.byteLength <= storedSize(w, h, c), `${id}: ${png.byteLength} bytes, stored would be ${storedSize(w, h, c)}`);
        }
      }
    }
  }
});

t.test("'fast': a literal sample that misleads the code gives stored blocks, not a larger file", async (t) => {
  // Grey, one row (so Up keeps the bytes as they are): the sampled literals (every fifth byte of the
  // strip, pixels 4, 9, 14, ...) are 0..15, all the others 16..239: the code built from the sample
  // gives the others 12 bits each, more than stored blocks take.
  const w = 5000;
  const noise = seededBytes(w, 3);
  const px = noise.map((v, i) => (i % 5 === 4 ? v & 15 : 16 + (v % 224)));
  const png = binding.encodePng(px, w, 1, 1, FAST);
  t.equal(png.byteLength, storedSize(w, 1, 1), 'exactly the stored size');
  t.ok((await decode(png)).data.equals(widen(px, 1)), 'pixels');
});

t.test("'fast': the same bytes for 1, 2 and 7 threads", async (t) => {
  for (const c of [1, 4] as const) {
    for (const [name, make] of Object.entries(GENERATORS)) {
      for (const [w, h] of fastSizes(c)) {
        const px = make(w, h, c, 5);
        const one = Buffer.from(binding.encodePng(px, w, h, c, FAST));
        for (const threads of [2, 7]) t.ok(one.equals(binding.encodePng(px, w, h, c, { ...FAST, threads })), `${name} ${w}x${h}x${c}: threads ${threads}`);
      }
    }
  }
});

// A real cut-out: an alphamatting photo with its measured alpha (hair: soft edges), colour zeroed
// where transparent as the pipeline does. Read in place from the eval set, never copied.
const CUTOUT_ID = 'am_GT04';
async function realCutout(): Promise<{ data: Buffer; width: number; height: number }> {
  const rgb = await sharp(join(EVAL_DIR, 'images', `${CUTOUT_ID}.png`))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const alpha = await sharp(join(EVAL_DIR, 'gt', `${CUTOUT_ID}.png`))
    .extractChannel(0)
    .raw()
    .toBuffer();
  const { width, height } = rgb.info;
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    if (alpha[i]) rgb.data.copy(data, 4 * i, 3 * i, 3 * i + 3);
    data[4 * i + 3] = alpha[i]!;
  }
  return { data, width, height };
}

t.test("'fast' on a real cut-out: RGBA and its matte decode back; threads change nothing; within 1.15x of 'rle'", { skip: EVAL_SKIP }, async (t) => {
  const { data, width: w, height: h } = await realCutout();
  const png = binding.encodePng(data, w, h, 4, FAST);
  t.ok((await decode(png)).data.equals(data), 'RGBA pixels');
  t.ok(Buffer.from(png).equals(binding.encodePng(data, w, h, 4, { ...FAST, threads: 7 })), 'threads 7: same bytes');
  const rle = binding.encodePng(data, w, h, 4, { level: 4, threads: 1, strategy: 'rle' });
  t.ok(png.byteLength <= 1.15 * rle.byteLength, `RGBA: ${png.byteLength} bytes against ${rle.byteLength} with 'rle'`);
  const matte = Buffer.alloc(w * h);
  for (let i = 0; i < matte.length; i++) matte[i] = data[4 * i + 3]!;
  const grey = binding.encodePng(matte, w, h, 1, FAST);
  t.ok((await decode(grey)).data.equals(widen(matte, 1)), 'matte pixels');
});

const pilProbe = spawnSync('python3', ['-c', 'import PIL'], { encoding: 'utf8' });
const noPil = pilProbe.status !== 0 && `PIL is not importable (${pilProbe.error ? pilProbe.error.message : pilProbe.stderr.trim().split('\n').at(-1)})`;
t.test("'fast' decoded by Python's PIL too", { skip: noPil }, async (t) => {
  const dir = t.testdir();
  for (const c of [1, 2, 3, 4] as const) {
    const [w, h] = [1021, stripRows(1021, c) + 7];
    const px = pattern(w, h, c, 21);
    writeFileSync(join(dir, 'in.png'), binding.encodePng(px, w, h, c, { ...FAST, threads: 2 }));
    const run = spawnSync(
      'python3',
      [
        '-c',
        'import sys; from PIL import Image; im = Image.open(sys.argv[1]); im.load(); open(sys.argv[2], "wb").write(im.tobytes())',
        join(dir, 'in.png'),
        join(dir, 'out.raw'),
      ],
      { encoding: 'utf8' },
    );
    t.equal(run.status, 0, `${w}x${h}x${c}: PIL decodes${run.stderr.trim() ? ` (${run.stderr.trim()})` : ''}`);
    t.ok(readFileSync(join(dir, 'out.raw')).equals(px), `${w}x${h}x${c}: PIL's pixels`);
  }
});
