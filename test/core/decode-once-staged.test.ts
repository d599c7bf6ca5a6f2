// The staged path's single decode (plan.decodeOnceStaged): where the output is an opaque photo's own
// size and the model input comes from a full-size decode anyway (the model enlarges it) or the photo
// is up to DECODE_ONCE_STAGED_MAX_BYTES, stage 1 decodes the photo once and hands it to stage 2. The
// model input is byte for byte the addon's resize of that decode, the result byte for byte what
// decoding again in stage 2 gives; elsewhere the plan keeps two decodes; a photo of the wrong size is
// refused.
import t from 'tap';
import sharp from 'sharp';
import { DEFAULT_OPTIONS, DEFAULT_QUALITY, type RemoveOptions } from '../../src/domain/removal.js';
import { loadBinding } from '../../src/native/binding.js';
import type { PreparedRemoval, PrepareResult, RemoveResult } from '../../src/pool/task.js';
import * as codec from '../../src/worker/codec.js';
import { DECODE_ONCE_STAGED_MAX_BYTES, finishStaged, LEAN_OVERLAP_DECODE_MAX_BYTES, prepareRemoval, type PipelineContext } from '../../src/worker/pipeline.js';
import { evalImage } from '../helpers/core-fixtures.js';

const ctx: PipelineContext = { binding: loadBinding(), model: { width: 1024, height: 1024 }, threads: 2, quality: DEFAULT_QUALITY };
const full: RemoveOptions = { ...DEFAULT_OPTIONS, size: 'full', format: 'png' };

/** A soft disc in the middle of the model's grid: enough for every composite stage to work. */
function discMask(): Float32Array {
  const m = new Float32Array(1024 * 1024);
  for (let y = 0; y < 1024; y++) for (let x = 0; x < 1024; x++) m[y * 1024 + x] = Math.min(1, Math.max(0, (300 - Math.hypot(x - 512, y - 540)) / 12));
  return m;
}

async function prepared(input: Uint8Array, options: RemoveOptions, lean = false): Promise<PreparedRemoval> {
  const r: PrepareResult = await prepareRemoval(lean ? { ...ctx, lean } : ctx, { input, options });
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r;
}

async function finished(p: PreparedRemoval, options: RemoveOptions, photo: boolean): Promise<Extract<RemoveResult, { ok: true }>> {
  const { photo: bytes, ...rest } = p;
  const r = await finishStaged(ctx, { input: rest.input, options, plan: rest.plan, mask: discMask(), timings: {}, ...(photo && bytes ? { photo: bytes } : {}) });
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r;
}

t.test('an enlarged opaque photo at full size: one decode, the same bytes', async (t) => {
  const input = new Uint8Array(evalImage('davis_car-shadow_00005')); // 854×480 JPEG
  const p = await prepared(input, full);
  t.ok(p.plan.decodeOnceStaged, 'the plan decodes once');
  t.ok(p.plan.decodeOnceStaged!.bytes >= 854 * 480 * 4 * 2 + 1024 * 1024 * 3, 'its estimate counts the decode, the copy and the model input');
  t.equal(p.photo?.length, 854 * 480 * 4, 'stage 1 hands on the RGBA photo');
  const probe = await codec.probe(input);
  const inMemory = await codec.decodeForModel(input, 50e6, 1024, 1024, probe);
  t.ok(Buffer.from(p.modelInput).equals(inMemory.data), 'the model input is the in-memory path\'s, byte for byte');
  const once = await finished(p, full, true);
  const twice = await finished(await prepared(input, full), full, false);
  t.ok(Buffer.from(once.data).equals(Buffer.from(twice.data)), 'the PNG is the same bytes as decoding again in stage 2');
  t.same(once.foreground, twice.foreground);
  t.same([once.width, once.height], [854, 480]);
});

t.test('elsewhere the plan keeps two decodes', async (t) => {
  const input = new Uint8Array(evalImage('davis_car-shadow_00005'));
  const preview = await prepared(input, { ...full, size: 'preview' });
  t.notOk(preview.plan.decodeOnceStaged, 'an output smaller than the photo');
  t.equal(preview.photo, undefined);
  const withAlpha = new Uint8Array(await sharp(input).ensureAlpha(0.5).png().toBuffer());
  t.notOk((await prepared(withAlpha, full)).plan.decodeOnceStaged, 'a photo with alpha (libvips resizes it premultiplied)');
  const huge = new Uint8Array(await sharp(input).resize(4800, 3600).jpeg().toBuffer());
  t.ok(4800 * 3600 * 4 > DECODE_ONCE_STAGED_MAX_BYTES);
  t.notOk((await prepared(huge, full)).plan.decodeOnceStaged, 'a photo the model shrinks, over DECODE_ONCE_STAGED_MAX_BYTES (shrink-on-load)');
  const big = new Uint8Array(await sharp(input).resize(2400, 1800).jpeg().toBuffer());
  t.ok(2400 * 1800 * 4 > LEAN_OVERLAP_DECODE_MAX_BYTES);
  t.ok((await prepared(big, full)).plan.decodeOnceStaged, 'a 4.3 MP photo the model shrinks: once');
  t.notOk((await prepared(big, full, true)).plan.decodeOnceStaged, 'the same in a lean pool (over LEAN_OVERLAP_DECODE_MAX_BYTES)');
});

t.test('a photo the model shrinks in both axes, at full size: one decode, the model input resized in memory', async (t) => {
  const input = new Uint8Array(await sharp(evalImage('davis_car-shadow_00005')).resize(2400, 1350).jpeg({ quality: 90 }).toBuffer());
  const p = await prepared(input, full);
  t.ok(p.plan.decodeOnceStaged, 'the plan decodes once');
  t.ok(p.plan.decodeOnceStaged!.bytes >= 2400 * 1350 * 4 * 2 + 1024 * 1024 * 3, 'its estimate counts the decode, the copy and the model input');
  t.equal(p.photo?.length, 2400 * 1350 * 4, 'stage 1 hands on the RGBA photo');
  const rgba = await codec.decodeRgba(input, 50e6, 2400, 1350, true);
  t.ok(Buffer.from(p.photo!).equals(rgba.data), 'the photo handed on is the full-size decode');
  const expected = Buffer.alloc(1024 * 1024 * 3);
  loadBinding().resizeToRgb(rgba.data, 2400, 1350, 4, expected, 1024, 1024, 1);
  t.ok(Buffer.from(p.modelInput).equals(expected), 'the model input is the addon\'s resize of it, byte for byte');
  // Shrink-on-load and libvips' cubic give nearly the same input: the model sees the same photo.
  const libvips = await codec.decodeForModel(input, 50e6, 1024, 1024);
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff += Math.abs(expected[i]! - libvips.data[i]!);
  t.ok(diff / expected.length < 2, `mean difference from libvips' model input ${(diff / expected.length).toFixed(2)} levels (< 2)`);
  const once = await finished(p, full, true);
  const twice = await finished(await prepared(input, full), full, false);
  t.ok(Buffer.from(once.data).equals(Buffer.from(twice.data)), 'the PNG is the same bytes as decoding again in stage 2');
});

t.test('a photo of the wrong size is refused', async (t) => {
  const p = await prepared(new Uint8Array(evalImage('davis_car-shadow_00005')), full);
  const bad = { ...p, photo: p.photo!.subarray(4) };
  await t.rejects(finished(bad, full, true), /Expected a 854x480 RGBA photo/);
});
