// The Session runs the real model over tensors it owns, shares one model per process, and refuses bad input.
import t from 'tap';
import sharp from 'sharp';
import { loadBinding, sessionOptionsFor, type SessionOptions } from '../../src/native/binding.js';
import { modelEntry } from '../../src/model/manifest.js';
import { syntheticFigure } from '../helpers/core-fixtures.js';

const binding = loadBinding();
const model = modelEntry();
const opts: SessionOptions = sessionOptionsFor(model.entry, 2);

t.test('missing model and bad options give coded errors', async (t) => {
  t.throws(() => new binding.Session('/nonexistent/model.onnx', opts), { code: 'ERR_CUTOUT_MODEL_MISSING', message: /nonexistent/ });
  t.throws(() => new binding.Session(model.path, { ...opts, threads: 0 }), { code: 'ERR_CUTOUT_ARG', name: 'TypeError' });
  t.throws(() => new binding.Session(model.path, { ...opts, mean: [1, 2] as never }), { code: 'ERR_CUTOUT_ARG' });
});

t.test('infer writes into the session-owned tensors and finds the subject', async (t) => {
  const s = new binding.Session(model.path, opts);
  t.teardown(() => s.close());
  const { width, height } = opts;
  // A generated figure at the model input's size: a head over a body, left of the centre line.
  const rgb = await sharp(await syntheticFigure(width, height, 'png'))
    .removeAlpha()
    .raw()
    .toBuffer();

  const inputBefore = s.inputTensor;
  const out = s.infer(rgb, 3);
  // Zero-copy: the returned mask is the session's own output tensor, and preprocessing wrote
  // straight into the same input tensor object JS can see.
  t.equal(out, s.outputTensor, 'output tensor identity');
  t.equal(s.inputTensor, inputBefore, 'input tensor identity');
  t.equal(out.length, width * height);
  const ref = new Float32Array(3 * width * height);
  binding.preprocess(rgb, width, height, 3, ref, opts.mean, opts.std);
  t.same(s.inputTensor.subarray(0, 4096), ref.subarray(0, 4096), 'input tensor holds the preprocessed pixels');
  t.same(s.inputTensor.subarray(2 * width * height, 2 * width * height + 4096), ref.subarray(2 * width * height, 2 * width * height + 4096));

  let min = Infinity;
  let max = -Infinity;
  let fg = 0;
  for (const v of out) {
    if (v < min) min = v;
    if (v > max) max = v;
    if (v > 0.5) fg++;
  }
  t.ok(min >= 0 && max <= 1, `probabilities in [0,1] (${min}..${max})`);
  const share = fg / out.length;
  t.ok(share > 0.15 && share < 0.8, `subject covers a plausible share of the frame (${share.toFixed(3)})`);
  // The figure's body stands 40% across, at the bottom; right of it and the top-left corner are backdrop.
  t.ok(out[Math.floor(height * 0.8) * width + Math.floor(width * 0.4)]! > 0.5, 'figure body is foreground');
  t.ok(out[Math.floor(height * 0.5) * width + Math.floor(width * 0.7)]! < 0.5, 'right of the figure is background');
  t.ok(out[10 * width + 10]! < 0.5, 'corner is background');
});

t.test('releaseTensors hands the tensors back: zeros until the next infer, which gives the same mask', async (t) => {
  const s = new binding.Session(model.path, opts);
  t.teardown(() => s.close());
  const { width, height } = opts;
  const rgb = await sharp(await syntheticFigure(width, height, 'png'))
    .removeAlpha()
    .raw()
    .toBuffer();
  const first = Float32Array.from(s.infer(rgb, 3));
  t.ok(
    first.some((v) => v > 0.5),
    'a mask before the release',
  );
  s.releaseTensors();
  // The whole pages went back (MADV_DONTNEED): they read as the kernel's zero page, not the mask. Only
  // the partial pages at either end of a buffer (not page-aligned) keep what they held.
  const inner = (a: Float32Array) => a.subarray(1024, a.length - 1024);
  t.ok(
    inner(s.outputTensor).every((v) => v === 0),
    'output tensor reads zeros',
  );
  t.ok(
    inner(s.inputTensor).every((v) => v === 0),
    'input tensor reads zeros',
  );
  t.throws(() => s.composite(new Uint8Array(4 * 4 * 4), 4, 4, { refine: false, decontaminate: false }), { code: 'ERR_CUTOUT_STATE' }, 'the mask is gone');
  const again = s.infer(rgb, 3);
  t.same(Buffer.from(again.buffer, again.byteOffset, again.byteLength), Buffer.from(first.buffer), 'the next infer writes the same mask');
  const rgba = new Uint8Array(4 * 4 * 4).fill(200);
  t.doesNotThrow(() => s.composite(rgba, 4, 4, { refine: false, decontaminate: false }), 'composite works again');
  t.ok(
    rgba.some((v, i) => i % 4 === 3 && v !== 200),
    'and writes alpha',
  );
});

t.test('infer and composite refuse wrong lengths and order', async (t) => {
  const s = new binding.Session(model.path, opts);
  t.teardown(() => s.close());
  t.throws(() => s.composite(new Uint8Array(16), 2, 2, { refine: false, decontaminate: false }), { code: 'ERR_CUTOUT_STATE' });
  t.throws(() => s.infer(new Uint8Array(10), 3), { code: 'ERR_CUTOUT_BAD_LENGTH', name: 'TypeError', message: /Expected 3145728 bytes/ });
  t.throws(() => s.infer(new Uint8Array(opts.width * opts.height * 3), 2 as 3), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => s.infer(null as never, 3), { code: 'ERR_CUTOUT_ARG' });
  s.infer(new Uint8Array(opts.width * opts.height * 3), 3);
  t.throws(() => s.composite(new Uint8Array(15), 2, 2, { refine: false, decontaminate: false }), { code: 'ERR_CUTOUT_BAD_LENGTH' });
  t.throws(() => s.composite(new Uint8Array(16), 2, 2, { refine: false, decontaminate: false, roi: [0, 0, 9, 9] }), { code: 'ERR_CUTOUT_ARG' });
  const rgba = new Uint8Array(8 * 8 * 4).fill(200);
  const box = s.composite(rgba, 8, 8, { refine: true, decontaminate: true });
  t.match(box, { top: Number, left: Number, width: Number, height: Number });
  s.close();
  t.throws(() => s.infer(new Uint8Array(opts.width * opts.height * 3), 3), { code: 'ERR_CUTOUT_CLOSED' });
});

t.test('sessions in one process share one loaded model', async (t) => {
  const a = new binding.Session(model.path, opts);
  const b = new binding.Session(model.path, opts);
  t.equal(binding.loadedModels(), 1);
  a.close();
  t.equal(binding.loadedModels(), 1, 'still held by b');
  b.close();
  t.equal(binding.loadedModels(), 0, 'released with the last session');
});

t.test('memory options must be booleans; each memory pattern setting is its own shared model', async (t) => {
  for (const [key, value] of [
    ['memoryPattern', 1],
    ['memoryPattern', 'yes'],
  ] as const) {
    t.throws(() => new binding.Session(model.path, { ...opts, [key]: value as never }), {
      name: 'TypeError',
      code: 'ERR_CUTOUT_ARG',
      message: new RegExp(`^Expected a boolean for options\\.${key} but received`),
    });
  }
  const lean = new binding.Session(model.path, { ...opts, memoryPattern: false });
  const same = new binding.Session(model.path, opts);
  t.equal(binding.loadedModels(), 1, 'the default is memoryPattern false');
  const pattern = new binding.Session(model.path, { ...opts, memoryPattern: true });
  t.equal(binding.loadedModels(), 2, 'a session with the memory pattern on is another ORT session');
  const rgb = new Uint8Array(opts.width * opts.height * 3).fill(128);
  const a = Float32Array.from(lean.infer(rgb, 3));
  const b = pattern.infer(rgb, 3);
  t.same(a.subarray(0, 4096), b.subarray(0, 4096), 'the settings change memory use, not results');
  for (const s of [lean, same, pattern]) s.close();
  t.equal(binding.loadedModels(), 0);
});

t.test('trimMemory() and the malloc settings the addon applied at load', async (t) => {
  t.type(binding.trimMemory(), 'boolean');
  t.type(binding.trimMemory(), 'boolean', 'callable again');
  if (process.env.CUTOUT_MALLOC_TUNING === 'off') t.equal(binding.mmapThreshold, null);
  else t.equal(binding.mmapThreshold, 4 * 1024 * 1024, 'fixed 4 MiB mmap threshold: big photo buffers get mappings of their own, unmapped when freed');
});
