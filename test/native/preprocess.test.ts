// The addon's preprocessing equals a plain TypeScript reference, and it refuses bad arguments with coded errors.
import t from 'tap';
import { loadBinding } from '../../src/native/binding.js';
import { seededBytes } from '../helpers/images.js';

const binding = loadBinding();
const MEAN = [128, 128, 128];
const STD = [256, 256, 256];

function reference(src: Uint8Array, w: number, h: number, c: number, mean: number[], std: number[]): Float32Array {
  const out = new Float32Array(3 * w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let k = 0; k < 3; k++) out[k * w * h + y * w + x] = (src[(y * w + x) * c + k]! - mean[k]!) / std[k]!;
    }
  }
  return out;
}

t.test('matches the reference on small RGB and RGBA images', async (t) => {
  for (const [w, h, c] of [
    [1, 1, 3],
    [3, 2, 3],
    [5, 7, 4],
    [16, 9, 4],
  ] as const) {
    const src = seededBytes(w * h * c, w * 31 + h);
    const dst = new Float32Array(3 * w * h);
    binding.preprocess(src, w, h, c, dst, MEAN, STD);
    t.same(Array.from(dst), Array.from(reference(src, w, h, c, MEAN, STD)), `${w}x${h}x${c}`);
  }
  // Non-trivial normalisation (ImageNet-like) within float rounding.
  const src = seededBytes(4 * 4 * 3, 7);
  const mean = [123.675, 116.28, 103.53];
  const std = [58.395, 57.12, 57.375];
  const dst = new Float32Array(48);
  binding.preprocess(src, 4, 4, 3, dst, mean, std);
  const ref = reference(src, 4, 4, 3, mean, std);
  for (let i = 0; i < dst.length; i++) t.ok(Math.abs(dst[i]! - ref[i]!) < 1e-5, `value ${i}`);
});

t.test('reads a view at its byteOffset, not the start of the ArrayBuffer', async (t) => {
  const backing = seededBytes(100, 3);
  const view = backing.subarray(10, 10 + 2 * 2 * 3);
  const dst = new Float32Array(12);
  binding.preprocess(view, 2, 2, 3, dst, MEAN, STD);
  t.same(Array.from(dst), Array.from(reference(view, 2, 2, 3, MEAN, STD)));
});

t.test('refuses wrong lengths and types with coded errors', async (t) => {
  const dst = new Float32Array(12);
  t.throws(() => binding.preprocess(new Uint8Array(11), 2, 2, 3, dst, MEAN, STD), {
    code: 'ERR_CUTOUT_BAD_LENGTH',
    name: 'TypeError',
    message: /Expected 12 bytes for src but received 11/,
  });
  t.throws(() => binding.preprocess(new Uint8Array(12), 2, 2, 3, new Float32Array(11), MEAN, STD), { code: 'ERR_CUTOUT_BAD_LENGTH' });
  t.throws(() => binding.preprocess('nope' as unknown as Uint8Array, 2, 2, 3, dst, MEAN, STD), {
    code: 'ERR_CUTOUT_ARG',
    message: /Expected a Uint8Array for src/,
  });
  t.throws(() => binding.preprocess(new Uint8Array(12), 2, 2, 5 as 3, dst, MEAN, STD), { code: 'ERR_CUTOUT_ARG', message: /channels/ });
  t.throws(() => binding.preprocess(new Uint8Array(12), -2, 2, 3, dst, MEAN, STD), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.preprocess(new Uint8Array(12), 2, 2, 3, dst, [1, 2], STD), { code: 'ERR_CUTOUT_ARG' });
  const detached = new Uint8Array(12);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  t.throws(() => binding.preprocess(detached, 2, 2, 3, dst, MEAN, STD), { code: /ERR_CUTOUT_(DETACHED|BAD_LENGTH)/ });
});

t.test('compositing helpers: flatten, blend, alpha extraction and mask upsampling', async (t) => {
  // Half-transparent red over opaque blue → purple-ish, opaque.
  const px = Uint8Array.from([255, 0, 0, 128]);
  binding.flattenOnColor(px, 0, 0, 255, 255);
  t.same(Array.from(px), [128, 0, 127, 255]);
  const fg = Uint8Array.from([10, 20, 30, 0, 200, 100, 50, 255]);
  const bg = Uint8Array.from([1, 2, 3, 255, 9, 9, 9, 255]);
  binding.blendOver(fg, bg);
  t.same(Array.from(fg), [1, 2, 3, 255, 200, 100, 50, 255]);
  const alpha = new Uint8Array(2);
  binding.extractAlpha(Uint8Array.from([0, 0, 0, 7, 0, 0, 0, 250]), alpha);
  t.same(Array.from(alpha), [7, 250]);
  t.throws(() => binding.blendOver(new Uint8Array(8), new Uint8Array(4)), { code: 'ERR_CUTOUT_BAD_LENGTH' });
  // A constant mask upsamples to the same constant everywhere.
  const mask = new Float32Array(4).fill(0.5);
  const out = new Uint8Array(6 * 5);
  binding.upsampleMask(mask, 2, 2, out, 6, 5, 1);
  t.ok(
    out.every((v) => v === 128 || v === 127),
    'constant 0.5 → 127/128',
  );
  t.throws(() => binding.upsampleMask(mask, 3, 2, out, 6, 5, 1), { code: 'ERR_CUTOUT_BAD_LENGTH' });
});

t.test('upsampleMask into RGBA (step 4): the alpha a plain mask gets, every colour byte untouched', async (t) => {
  // 37 columns: eight-pixel groups and a tail; values past 0..1 and a NaN clamp as the scalar path does.
  const mw = 9,
    mh = 7,
    w = 37,
    h = 11;
  const mask = Float32Array.from({ length: mw * mh }, (_, i) => ((i * 37) % 23) / 20 - 0.05);
  mask[10] = Number.NaN;
  mask[20] = 3;
  const plain = new Uint8Array(w * h);
  binding.upsampleMask(mask, mw, mh, plain, w, h, 1);
  const rgba = Uint8Array.from({ length: w * h * 4 }, (_, i) => (i * 131 + 7) & 255);
  const before = rgba.slice();
  binding.upsampleMask(mask, mw, mh, rgba, w, h, 4);
  t.same(
    Array.from({ length: w * h }, (_, i) => rgba[i * 4 + 3]),
    Array.from(plain),
    'alpha = the step-1 mask, byte for byte',
  );
  t.ok(
    Array.from({ length: w * h * 3 }, (_, k) => Math.floor(k / 3) * 4 + (k % 3)).every((i) => rgba[i] === before[i]),
    'r, g, b as they were',
  );
  t.ok(plain.includes(0) && plain.includes(255), 'clamped at both ends');
});
