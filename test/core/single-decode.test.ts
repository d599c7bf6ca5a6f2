// One decode per photo (plan.singleDecode): where the output is an opaque photo's own size and the
// model input comes from a full-size decode anyway (the model enlarges it) or the photo is up to
// OVERLAP_DECODE_MAX_BYTES, the photo is decoded once and the model input resized from it in memory.
// Staged path: stage 1 hands the photo to stage 2; the model input is byte for byte the addon's resize
// of that decode, the result byte for byte what decoding again in stage 2 gives; elsewhere the plan
// keeps two decodes; a photo of the wrong size is refused. CPU path: the same model input, so the
// same PNG as the staged path given the same model.
import t from 'tap';
import sharp from 'sharp';
import { DEFAULT_OPTIONS, DEFAULT_QUALITY, type RemoveOptions } from '../../src/domain/removal.js';
import { loadBinding } from '../../src/native/binding.js';
import type { PreparedRemoval, PrepareResult, RemoveResult } from '../../src/pool/protocol.js';
import * as codec from '../../src/worker/codec.js';
import { OVERLAP_DECODE_MAX_BYTES } from '../../src/domain/removal.js';
import { finishStaged, LEAN_OVERLAP_DECODE_MAX_BYTES, prepareRemoval, runPipeline, type PipelineContext } from '../../src/worker/pipeline.js';
import { modelEntry, sessionOptionsFor } from '../../src/model/manifest.js';
import { syntheticFigure } from '../helpers/core-fixtures.js';
import { PhotoBuffer } from '../../src/worker/photo-buffer.js';

const ctx: PipelineContext = { binding: loadBinding(), model: { width: 1024, height: 1024 }, threads: 2, quality: DEFAULT_QUALITY };
const full: RemoveOptions = { ...DEFAULT_OPTIONS, size: 'full', format: 'png' };
// A plain JPEG (sharp's: no ICC profile, no orientation, three channels) the size of a DAVIS frame,
// 854×480: the model enlarges it.
const frame = await syntheticFigure(854, 480);

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
  const r = await finishStaged(ctx, {
    input: rest.input,
    options,
    plan: rest.plan,
    mask: discMask(),
    timings: {},
    ...(photo && bytes ? { photo: bytes } : {}),
  });
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r;
}

t.test('an enlarged opaque photo at full size: one decode, the same bytes', async (t) => {
  const input = new Uint8Array(frame); // 854×480 JPEG
  const p = await prepared(input, full);
  t.ok(p.plan.singleDecode, 'the plan decodes once');
  t.ok(p.plan.singleDecode!.bytes >= 854 * 480 * 4 * 2 + 1024 * 1024 * 3, 'its estimate counts the decode, the copy and the model input');
  t.equal(p.photo?.length, 854 * 480 * 4, 'stage 1 hands on the RGBA photo');
  const probe = await codec.probe(input);
  const inMemory = await codec.decodeForModel(input, 50e6, 1024, 1024, probe);
  t.ok(Buffer.from(p.modelInput).equals(inMemory.data), "the model input is the in-memory path's, byte for byte");
  const once = await finished(p, full, true);
  const twice = await finished(await prepared(input, full), full, false);
  t.ok(Buffer.from(once.data).equals(Buffer.from(twice.data)), 'the PNG is the same bytes as decoding again in stage 2');
  t.same(once.foreground, twice.foreground);
  t.same([once.width, once.height], [854, 480]);
});

t.test('elsewhere the plan keeps two decodes', async (t) => {
  const input = new Uint8Array(frame);
  const preview = await prepared(input, { ...full, size: 'preview' });
  t.notOk(preview.plan.singleDecode, 'an output smaller than the photo');
  t.equal(preview.photo, undefined);
  const withAlpha = new Uint8Array(await sharp(input).ensureAlpha(0.5).png().toBuffer());
  t.notOk((await prepared(withAlpha, full)).plan.singleDecode, 'a photo with alpha (libvips resizes it premultiplied)');
  const huge = new Uint8Array(await sharp(input).resize(4800, 3600).jpeg().toBuffer());
  t.ok(4800 * 3600 * 4 > OVERLAP_DECODE_MAX_BYTES);
  t.notOk((await prepared(huge, full)).plan.singleDecode, 'a photo the model shrinks, over OVERLAP_DECODE_MAX_BYTES (shrink-on-load)');
  const big = new Uint8Array(await sharp(input).resize(2400, 1800).jpeg().toBuffer());
  t.ok(2400 * 1800 * 4 > LEAN_OVERLAP_DECODE_MAX_BYTES);
  t.ok((await prepared(big, full)).plan.singleDecode, 'a 4.3 MP photo the model shrinks: once');
  t.notOk((await prepared(big, full, true)).plan.singleDecode, 'the same in a lean pool (over LEAN_OVERLAP_DECODE_MAX_BYTES)');
});

t.test('a photo the model shrinks in both axes, at full size: one decode, the model input resized in memory', async (t) => {
  const input = new Uint8Array(await sharp(frame).resize(2400, 1350).jpeg({ quality: 90 }).toBuffer());
  const p = await prepared(input, full);
  t.ok(p.plan.singleDecode, 'the plan decodes once');
  t.ok(p.plan.singleDecode!.bytes >= 2400 * 1350 * 4 * 2 + 1024 * 1024 * 3, 'its estimate counts the decode, the copy and the model input');
  t.equal(p.photo?.length, 2400 * 1350 * 4, 'stage 1 hands on the RGBA photo');
  const rgba = await codec.decodeRgba(input, 50e6, 2400, 1350, true);
  t.ok(Buffer.from(p.photo!).equals(rgba.data), 'the photo handed on is the full-size decode');
  const expected = Buffer.alloc(1024 * 1024 * 3);
  loadBinding().resizeToRgb(rgba.data, 2400, 1350, 4, expected, 1024, 1024, 1);
  t.ok(Buffer.from(p.modelInput).equals(expected), "the model input is the addon's resize of it, byte for byte");
  // Shrink-on-load and libvips' cubic give nearly the same input: the model sees the same photo.
  const libvips = await codec.decodeForModel(input, 50e6, 1024, 1024);
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff += Math.abs(expected[i]! - libvips.data[i]!);
  t.ok(diff / expected.length < 2, `mean difference from libvips' model input ${(diff / expected.length).toFixed(2)} levels (< 2)`);
  const once = await finished(p, full, true);
  const twice = await finished(await prepared(input, full), full, false);
  t.ok(Buffer.from(once.data).equals(Buffer.from(twice.data)), 'the PNG is the same bytes as decoding again in stage 2');
});

t.test("the CPU path decodes such a photo once too, up to 16 MP: the staged path's model input, the same PNG", async (t) => {
  // Over 16 MiB of RGBA (the CPU path's former bound): decoded twice there, its PNG differed.
  t.ok(2400 * 1800 * 4 > 16 * 1024 * 1024 && 2400 * 1800 * 4 <= OVERLAP_DECODE_MAX_BYTES);
  const input = new Uint8Array(
    await sharp(await syntheticFigure(800, 563, 'png'))
      .resize(2400, 1800)
      .jpeg({ quality: 90 })
      .toBuffer(),
  );
  const entry = modelEntry('isnet-int8', 'cpu');
  const session = new ctx.binding.Session(entry.path, sessionOptionsFor(entry.entry, 2));
  t.teardown(() => session.close());
  const cpu = await runPipeline({ ...ctx, session }, { input, options: full });
  if (!cpu.ok) throw new Error(cpu.message);
  const p = await prepared(input, full);
  const mask = Float32Array.from(session.infer(p.modelInput, 3));
  const { photo, ...rest } = p;
  const staged = await finishStaged(ctx, { input: rest.input, options: full, plan: rest.plan, mask, timings: {}, photo: photo! });
  if (!staged.ok) throw new Error(staged.message);
  t.ok(
    Buffer.from(cpu.data).equals(Buffer.from(staged.data)),
    "the CPU path's PNG is the staged path's, byte for byte (its mask came from the same in-memory model input)",
  );
  const viaLibvips = await codec.decodeForModel(input, 50e6, 1024, 1024);
  t.notOk(viaLibvips.data.equals(Buffer.from(p.modelInput)), "which is not libvips' shrink-on-load input");
  const { data } = await sharp(cpu.data).raw().toBuffer({ resolveWithObject: true });
  let opaque = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] === 255) opaque++;
  t.ok(opaque > 0.05 * 2400 * 1800 && opaque < 0.95 * 2400 * 1800, `a cut-out: ${((100 * opaque) / (2400 * 1800)).toFixed(1)}% opaque`);
});

t.test('a truncated photo that would be decoded once: the typed failure on both paths, nothing decoded twice', async (t) => {
  const whole = await sharp(frame).resize(2400, 1350).jpeg({ quality: 90 }).toBuffer();
  const cut = new Uint8Array(whole.subarray(0, Math.floor(whole.length * 0.6)));
  const staged = await prepareRemoval(ctx, { input: cut, options: full });
  t.equal(staged.ok, false);
  t.equal(!staged.ok && staged.code, 'failed_to_read_image', 'staged path: failed_to_read_image');
  const entry = modelEntry('isnet-int8', 'cpu');
  const session = new ctx.binding.Session(entry.path, sessionOptionsFor(entry.entry, 2));
  t.teardown(() => session.close());
  const cpu = await runPipeline({ ...ctx, session }, { input: cut, options: full });
  t.equal(!cpu.ok && cpu.code, 'failed_to_read_image', 'CPU path: failed_to_read_image');
  const good = await prepareRemoval(ctx, { input: new Uint8Array(whole), options: full });
  t.ok(good.ok && good.plan.singleDecode, 'the whole photo is one the plan decodes once');
});

t.test('a photo of the wrong size is refused', async (t) => {
  const p = await prepared(new Uint8Array(frame), full);
  const bad = { ...p, photo: p.photo!.subarray(4) };
  await t.rejects(finished(bad, full, true), /Expected a 854x480 RGBA photo/);
});

t.test("a plain JPEG decodes straight into memory of our own: staged, handed on as it is; CPU path, into the worker's kept photo memory", async (t) => {
  const input = new Uint8Array(frame); // 854×480, a plain JPEG
  const probe = await codec.probe(input);
  t.equal(probe.plainRgb, true);
  const p = await prepared(input, full);
  t.equal(p.plan.plainRgb, true, 'the plan carries it');
  const bySharp = await codec.decodeRgba(input, 50e6, 854, 480, true);
  t.ok(Buffer.from(p.photo!).equals(bySharp.data), "the photo stage 1 hands on: the bytes of sharp's decode");
  t.equal(p.photo!.buffer.byteLength, 854 * 480 * 4, 'in an ArrayBuffer of its own, transferred as it is');

  const entry = modelEntry('isnet-int8', 'cpu');
  const session = new ctx.binding.Session(entry.path, sessionOptionsFor(entry.entry, 2));
  t.teardown(() => session.close());
  const photoBuffer = new PhotoBuffer(16 * 1024 * 1024);
  const modelInputBuffer = new PhotoBuffer(1024 * 1024 * 3);
  const plainCtx = { ...ctx, session };
  const keptCtx = { ...ctx, session, photoBuffer, modelInputBuffer };
  const expected = await runPipeline(plainCtx, { input, options: full });
  const first = await runPipeline(keptCtx, { input, options: full });
  t.equal(photoBuffer.bytes, 854 * 480 * 4, 'the photo was decoded into the kept memory');
  t.equal(modelInputBuffer.bytes, 1024 * 1024 * 3, 'its model input resized into the other kept memory');
  const smaller = new Uint8Array(await sharp(input).resize(640, 360).jpeg({ quality: 90 }).toBuffer());
  const small = await runPipeline(keptCtx, { input: smaller, options: full });
  t.equal(photoBuffer.bytes, 854 * 480 * 4, 'a smaller photo reuses it');
  const again = await runPipeline(keptCtx, { input, options: full });
  for (const r of [expected, first, small, again]) if (!r.ok) throw new Error(r.message);
  t.ok(first.ok && expected.ok && Buffer.from(first.data).equals(Buffer.from(expected.data)), "the same PNG as through sharp's decode");
  t.ok(again.ok && expected.ok && Buffer.from(again.data).equals(Buffer.from(expected.data)), 'and again after a smaller photo overwrote the memory');
  const smallAlone = await runPipeline(plainCtx, { input: smaller, options: full });
  t.ok(small.ok && smallAlone.ok && Buffer.from(small.data).equals(Buffer.from(smallAlone.data)), 'the smaller photo: its own PNG, nothing of the larger one');

  const icc = new Uint8Array(await sharp(input).withIccProfile('p3').jpeg({ quality: 90 }).toBuffer());
  const kept = new PhotoBuffer(16 * 1024 * 1024);
  const viaSharp = await runPipeline({ ...ctx, session, photoBuffer: kept }, { input: icc, options: full });
  t.ok(viaSharp.ok, 'a JPEG with an ICC profile still goes through');
  t.equal(kept.bytes, 0, 'through sharp, which converts it: the kept memory unused');

  const cut = new Uint8Array(input.subarray(0, Math.floor(input.length * 0.6)));
  const failed = await runPipeline(keptCtx, { input: cut, options: full });
  t.equal(!failed.ok && failed.code, 'failed_to_read_image', 'truncated: the typed failure');
  t.equal(!failed.ok && failed.message, 'The image file is truncated or corrupt (JPEG data ends early).', "in the client's words");
  t.match(!failed.ok && failed.cause, /premature end of JPEG image/, "libvips' reason kept for the log");
  const after = await runPipeline(keptCtx, { input, options: full });
  t.ok(after.ok && expected.ok && Buffer.from(after.data).equals(Buffer.from(expected.data)), 'the next photo is unaffected');

  const big = new Uint8Array(await sharp(input).resize(2400, 1800).jpeg({ quality: 85 }).toBuffer());
  t.ok(2400 * 1800 * 4 > photoBuffer.maxBytes);
  const bigResult = await runPipeline(keptCtx, { input: big, options: full });
  t.ok(bigResult.ok, 'a photo over the bound goes through');
  t.equal(photoBuffer.bytes, 0, 'and the kept memory went, so it is not resident beside it');
});

t.test('staged stage 1 with photo memory handed in: a plain JPEG decodes into it; otherwise it comes back unused', async (t) => {
  const input = new Uint8Array(frame); // 854×480, a plain JPEG
  const bytes = 854 * 480 * 4;
  const bySharp = await codec.decodeRgba(input, 50e6, 854, 480, true);
  const roomy = new ArrayBuffer(bytes + 4096);
  new Uint8Array(roomy).fill(0xab);
  const into = await prepareRemoval(ctx, { input, options: full, photoMemory: roomy });
  if (!into.ok) throw new Error(into.message);
  t.equal(into.photo!.buffer, roomy, 'the photo is in the memory handed in');
  t.equal(into.photo!.length, bytes, 'a view of exactly the photo');
  t.equal(into.unusedMemory, undefined, 'nothing handed back unused');
  t.ok(Buffer.from(into.photo!).equals(bySharp.data), "the bytes of sharp's decode");
  const finishedInto = await finished(into, full, true);
  const fresh = await finished(await prepared(input, full), full, true);
  t.ok(Buffer.from(finishedInto.data).equals(Buffer.from(fresh.data)), 'stage 2 makes the same PNG of it');

  const small = new ArrayBuffer(bytes - 1);
  const tooSmall = await prepareRemoval(ctx, { input, options: full, photoMemory: small });
  t.ok(tooSmall.ok && tooSmall.photo!.buffer !== small && tooSmall.photo!.buffer.byteLength === bytes, 'too small: the photo gets bytes of its own');
  t.equal(tooSmall.ok && tooSmall.unusedMemory, small, 'and the memory comes back unused');

  const icc = new Uint8Array(await sharp(input).withIccProfile('p3').jpeg({ quality: 90 }).toBuffer());
  const memory = new ArrayBuffer(bytes);
  const notPlain = await prepareRemoval(ctx, { input: icc, options: full, photoMemory: memory });
  t.ok(notPlain.ok && notPlain.photo && notPlain.photo.buffer !== memory, 'not a plain JPEG: sharp decodes it, copied once');
  t.equal(notPlain.ok && notPlain.unusedMemory, memory, 'the memory comes back unused');

  const preview = await prepareRemoval(ctx, { input, options: { ...full, size: 'preview' }, photoMemory: memory });
  t.ok(preview.ok && preview.photo === undefined, 'no single decode at preview');
  t.equal(preview.ok && preview.unusedMemory, memory, 'the memory comes back unused');
});
