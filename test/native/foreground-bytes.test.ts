// The composite's bytes pinned on a synthetic scene, as the addon of 2026-11-28 (main at 277fc91)
// gave them: a speed-up of the foreground colour solver (vector lanes, sweeps along diagonals) must
// keep every pixel. The thread-count test cannot see this: a sweep in the wrong order is wrong the
// same way for every thread count (this test fails on a build whose rows run in the reverse skew).
// x64 only: the hashes depend on the x86-64-v3 build's fused multiply-adds.
import t from 'tap';
import { createHash } from 'node:crypto';
import { loadBinding, type CompositeOptions } from '../../src/native/binding.js';
import { noiseMask, noiseScene } from '../helpers/matting-fixtures.js';

const binding = loadBinding();
// 1280×1100, semi-transparent over most of the frame: the solver's working box is at its cap and
// its big levels run as the threaded wavefront.
const scene = noiseScene();
const MASK_SIZE = 256;
const mask = noiseMask(MASK_SIZE, MASK_SIZE);

const CASES: Array<{ name: string; options: CompositeOptions; sha256: string }> = [
  { name: 'foreground colour alone', options: { refine: false, decontaminate: true }, sha256: '74bf5e6b6ef8b2d26749cc5cd15f2fbf19478c2a2380a228f6265e0244f52100' },
  { name: 'refine, matting and foreground colour', options: { refine: true, matting: true, decontaminate: true }, sha256: '96019bcbf78e822cabb234d122e8a22840d1e08de67f3242a986e8d60e728615' },
];

t.test('the composite of the noise scene is byte for byte the pinned one', { skip: process.arch !== 'x64' && 'hashes of the x86-64 build' }, async (t) => {
  for (const { name, options, sha256 } of CASES) {
    for (const threads of [1, 2]) {
      const px = scene.photo.slice();
      const box = binding.compositeMask(px, scene.width, scene.height, mask, MASK_SIZE, MASK_SIZE, { ...options, threads });
      t.equal(createHash('sha256').update(px).digest('hex'), sha256, `${name}, ${threads} thread(s)`);
      t.same(box, { top: 0, left: 0, width: scene.width, height: scene.height }, `${name}: the box`);
    }
  }
});
