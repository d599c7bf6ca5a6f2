// The foreground colour estimation (native/src/foreground.cc) held against the same maths in double
// precision (test/helpers/foreground-reference.ts): every colour byte of a busy scene within a level
// or two of the reference, and its contract: alpha untouched, opaque pixels keep their colour,
// transparent ones get colour 0, the same bytes for any thread count. A sweep in the wrong order, a
// wrong neighbour or a wrong tap moves far more pixels than the rounding of float against double.
import t from 'tap';
import { loadBinding, type CompositeOptions } from '../../src/native/binding.js';
import { byteDiff, describeDiff } from '../helpers/byte-diff.js';
import { foregroundReference } from '../helpers/foreground-reference.js';
import { noiseMask, noiseScene } from '../helpers/matting-fixtures.js';

const binding = loadBinding();
// 1280×1100, semi-transparent over most of the frame: the solver's working box is at its cap (the
// photo is box-downscaled by 2) and its big levels run as the threaded wavefront.
const scene = noiseScene();
const { width: w, height: h } = scene;
const MASK_SIZE = 256;
const mask = noiseMask(MASK_SIZE, MASK_SIZE);

function composite(options: CompositeOptions): Uint8Array {
  const px = scene.photo.slice();
  const box = binding.compositeMask(px, w, h, mask, MASK_SIZE, MASK_SIZE, options);
  if (box.width !== w || box.height !== h) throw new Error(`unexpected box ${JSON.stringify(box)}`);
  return px;
}

const alphaOf = (rgba: Uint8Array): Uint8Array => Uint8Array.from({ length: rgba.length / 4 }, (_, i) => rgba[i * 4 + 3]!);

const CASES: Array<{ name: string; options: CompositeOptions }> = [
  { name: 'foreground colour alone', options: { refine: false, decontaminate: true } },
  { name: 'refine, matting and foreground colour', options: { refine: true, matting: true, decontaminate: true } },
];

for (const { name, options } of CASES) {
  t.test(`${name}: within a level of the double-precision reference`, async (t) => {
    const got = composite({ ...options, threads: 2 });
    const alpha = alphaOf(got);
    const want = foregroundReference(scene.photo, alpha, w, h);
    let partial = 0;
    for (const a of alpha) if (a > 0 && a < 255) partial++;
    t.ok(partial > alpha.length / 4, `most of the frame is semi-transparent (${partial} pixels)`);
    // Colour of the semi-transparent pixels: the solver's output. Measured on x86-64-v3 (FMA
    // contracted by GCC): max 1, 0 bytes off by more than 1.
    const d = byteDiff(got, want, (i) => i % 4 !== 3 && alpha[i >> 2]! > 0 && alpha[i >> 2]! < 255);
    t.ok(d.max <= 2, `no colour byte more than 2 levels off: ${describeDiff(d)}`);
    t.ok(d.overOne <= d.n / 1000, 'at most 0.1% more than 1 level off');
    // Everything else exactly: alpha, opaque colour, transparent colour.
    const rest = byteDiff(got, want, (i) => i % 4 === 3 || alpha[i >> 2] === 0 || alpha[i >> 2] === 255);
    t.equal(rest.differ, 0, `alpha, opaque and transparent pixels exact (${rest.n} bytes)`);
  });
}

t.test('the contract: alpha untouched, opaque colour kept, transparent colour 0, any thread count', async (t) => {
  for (const { name, options } of CASES) {
    const one = composite({ ...options, threads: 1 });
    const without = composite({ ...options, decontaminate: false, threads: 1 });
    t.ok(Buffer.from(alphaOf(one)).equals(Buffer.from(alphaOf(without))), `${name}: alpha as without decontamination`);
    let opaqueChanged = 0,
      transparentColoured = 0,
      opaque = 0,
      transparent = 0;
    for (let i = 0; i < one.length; i += 4) {
      if (one[i + 3] === 255) {
        opaque++;
        if (one[i] !== scene.photo[i] || one[i + 1] !== scene.photo[i + 1] || one[i + 2] !== scene.photo[i + 2]) opaqueChanged++;
      } else if (one[i + 3] === 0) {
        transparent++;
        if (one[i] || one[i + 1] || one[i + 2]) transparentColoured++;
      }
    }
    t.ok(opaque > 1000 && transparent > 1000, `${name}: both kinds present (${opaque} opaque, ${transparent} transparent)`);
    t.equal(opaqueChanged, 0, `${name}: alpha 255 keeps the photo's colour`);
    t.equal(transparentColoured, 0, `${name}: alpha 0 gets colour 0`);
    for (const threads of [2, 3]) {
      t.ok(Buffer.from(composite({ ...options, threads })).equals(Buffer.from(one)), `${name}: ${threads} threads, the bytes of one`);
    }
  }
});
