// One removal on the calling worker thread, in stages: plan (probe, sizes, ROI) → decode for the
// model → infer → decode at output size → mask into alpha → background → crop/placement → encode.
// runPipeline does them all on one thread (the CPU path); prepareRemoval and finishRemoval are the
// two halves of the staged path, where the inference runs in a batch elsewhere (src/pool/staged-pool.ts).
// Typed failures are returned, never thrown.
import type { CompositeOptions, NativeBinding, NativeBox, NativeSession } from '../native/binding.js';
import type { DecodeMemory } from '../process/decode-memory.js';
import { MAX_DECODE_BYTES, MAX_INPUT_PIXELS, MAX_INPUT_SIDE, OVERLAP_DECODE_MAX_BYTES, type QualityLevel, type RemoveOptions } from '../domain/removal.js';
import type { FinishTask, PrepareResult, RemovalPlan, RemoveFailure, RemoveResult, RemoveTask } from '../pool/protocol.js';
import { decoderMessage, describeDecodeFailure } from '../image/decoder-message.js';
import { collectGarbage } from '../process/collect-garbage.js';
import * as codec from './codec.js';
import { addBytes, decodeCost, describeDecode, toMB, type DecodeCost } from './decode-budget.js';
import { atInputResolution, cropRect, outputSize, placeSubject, roiToOutput } from './geometry.js';
import type { PhotoBuffer } from './photo-buffer.js';
import { fuseMirrored, mirrorRgb, qualityPlan } from './quality-level.js';

export interface ModelShape {
  width: number;
  height: number;
}

export interface PipelineContext {
  binding: NativeBinding;
  /** The worker's own model session (CPU path); absent on a staged worker, whose masks come from a batch. */
  session?: NativeSession;
  model: ModelShape;
  /** Threads for the composite passes and the PNG deflate of one photo (the cores this worker may use). */
  threads: number;
  /**
   * The process's decode memory, shared by the photo workers: a task with a `decodeSlot` takes its
   * decodes' estimate here before decoding (waiting its turn when others hold too much). The worker
   * gives it back once the task's memory is released (src/worker/worker.ts).
   */
  decodeMemory?: DecodeMemory;
  /** The pool's quality level, for tasks that name none. */
  quality: QualityLevel;
  /**
   * Memory first (memoryRelease 'every-task'): only outputs up to LEAN_OVERLAP_DECODE_MAX_BYTES are
   * decoded while the model runs, so a big photo and the model's working memory are never resident together.
   */
  lean?: boolean;
  /** This task's: set when a decode held a source whole and made room first (holdDecodeMemory); the worker then trims after it. */
  bigDecode?: { made: boolean };
  /** The CPU worker's kept photo memory (photo-buffer.ts): a plain photo decoded once decodes into it. */
  photoBuffer?: PhotoBuffer;
  /** The CPU worker's kept model-input memory: the model input resized from a photo decoded once goes into it. */
  modelInputBuffer?: PhotoBuffer;
}

/**
 * True when a decode of this photo holds much of its source (over OVERLAP_DECODE_MAX_ESTIMATE: a
 * source held whole, a decompression bomb at preview). Ordinary photos, 20 MP JPEGs included, hold
 * less: their memory stays mapped for the next photo.
 */
export function holdsSourceWhole(plan: RemovalPlan): boolean {
  return plan.decodeSource > OVERLAP_DECODE_MAX_ESTIMATE;
}

function fail(code: RemoveFailure['code'], message: string): RemoveFailure {
  return { ok: false, code, message };
}

/**
 * The photo did not decode: what is wrong with the file in the client's words, libvips' own as the
 * cause (the request log's). `bytes` names the format where libvips' words do not.
 */
function unreadable(err: unknown, bytes?: Uint8Array): RemoveFailure {
  return { ...fail('failed_to_read_image', describeDecodeFailure(err, bytes)), cause: decoderMessage(err) };
}

/** The background image did not decode. */
function unreadableBackground(err: unknown, bytes?: Uint8Array): RemoveFailure {
  return { ...fail('failed_bg_image', `Background image: ${describeDecodeFailure(err, bytes)}`), cause: decoderMessage(err) };
}

/**
 * OVERLAP_DECODE_MAX_BYTES where memory comes first (PipelineContext.lean): 16 MiB, a photo up to 4 MP.
 * A 12 MP photo's 48 MB then waits for the model: ~190 ms more, ~50 MB off the peak (docs/memory.md).
 */
export const LEAN_OVERLAP_DECODE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Largest decode estimate (what it holds of the source plus its result) run while the model runs, or
 * beside another decode: a small output of a source held whole (an interlaced PNG, a progressive
 * JPEG) waits for the model too. 128 MB still lets every baseline JPEG and 8-bit RGB PNG up to 50 MP
 * overlap at preview, medium and hd (docs/memory.md, "Decoding").
 */
export const OVERLAP_DECODE_MAX_ESTIMATE = 128 * 1024 * 1024;

/**
 * Largest decode for the model (its estimate, bytes) on the CPU path that runs beside the block
 * cache's kept blocks (the last model run's tensors, ~230 MB mapped): a bigger one (a photo over
 * ~8 MP decoded whole, without shrink-on-load) hands them back first, so the two are never resident
 * together (bench:memory, 30 requests at c = 4: the peak was such a decode beside the kept blocks).
 * Only there: handing them back after a 12 MP photo's model run, to encode without them, cost the
 * next run ~170 ms of faults (bench:compare against 6697d11: 0.99 instead of 0.86, docs/memory.md).
 */
export const KEPT_BESIDE_DECODE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Largest RGBA working size (bytes) for decoding a photo once where the two decodes would each hold
 * much of the source: the model input and the output are both resized from it in memory. At
 * 7000x7000 to a preview this halves the decoding (an interlaced PNG: 930 → 490 ms; a progressive
 * JPEG: 340 → 190 ms) at the same peak (docs/memory.md, "Decoding").
 */
export const DECODE_ONCE_MAX_BYTES = 16 * 1024 * 1024;

/** The largest output decode that may run while the model runs (bytes of RGBA): by the pool's memory policy. */
function overlapMaxBytes(ctx: PipelineContext): number {
  return ctx.lean ? LEAN_OVERLAP_DECODE_MAX_BYTES : OVERLAP_DECODE_MAX_BYTES;
}

/** The smallest size with the photo's aspect that covers both `a` and `b` (never above the photo's own). */
function coveringSize(photo: { width: number; height: number }, a: ModelShape, b: ModelShape): ModelShape {
  const scale = Math.min(1, Math.max(a.width / photo.width, a.height / photo.height, b.width / photo.width, b.height / photo.height));
  return {
    width: Math.min(photo.width, Math.ceil(photo.width * scale)),
    height: Math.min(photo.height, Math.ceil(photo.height * scale)),
  };
}

/** Milliseconds per stage, rounded to 0.1 ms. */
class Stopwatch {
  private last = performance.now();
  private readonly start = this.last;
  constructor(readonly timings: Record<string, number> = {}) {}
  mark(name: string): void {
    const now = performance.now();
    this.timings[name] = Math.round((now - this.last) * 10) / 10;
    this.last = now;
  }
  /** Like mark, adding to what the stage already took (a stage met twice, e.g. on both halves of the staged path). */
  add(name: string): void {
    const before = this.timings[name] ?? 0;
    this.mark(name);
    this.timings[name] = Math.round((this.timings[name]! + before) * 10) / 10;
  }
  total(): void {
    this.timings.total = Math.round((performance.now() - this.start) * 10) / 10 + (this.timings.total ?? 0);
  }
}

/** What decoding the model input holds, on the path codec.decodeForModel takes for this photo. */
export function modelDecodeCost(probe: codec.Probe, model: ModelShape): DecodeCost {
  if (!codec.resizesModelInputInMemory(probe, model.width, model.height)) {
    return decodeCost(probe.header, { width: model.width, height: model.height, channels: 3, resize: true });
  }
  // The photo decoded whole at its own size (RGB), and the model input resized from it beside it.
  return addBytes(decodeCost(probe.header, { width: probe.width, height: probe.height, channels: 3, resize: false }), model.width * model.height * 3);
}

/**
 * Header-only look at the photo: format, oriented size, pixel caps, output size, ROI, and what each
 * decode will hold (over `maxDecode` for the source: refused before any pixel is decoded).
 * No sniff here: the edges did (api/image-input.ts, lib/remove.ts); a format libvips reads but we do
 * not decode is named by the decoder, so a pool caller that skipped the edge still gets a typed failure.
 */
async function planRemoval(
  input: Uint8Array,
  options: RemoveOptions,
  model: ModelShape,
  maxDecode: number,
  singleMaxBytes: number,
): Promise<RemovalPlan | RemoveFailure> {
  let probe: codec.Probe;
  try {
    probe = await codec.probe(input);
  } catch (err) {
    if (err instanceof codec.UnsupportedFormatError) return fail('invalid_file_type', `Expected jpg/png/webp, received ${err.format}`);
    return unreadable(err, input);
  }
  const inputPixels = probe.width * probe.height;
  if (inputPixels > MAX_INPUT_PIXELS) {
    const mp = Math.round(inputPixels / 1e6);
    return fail('resolution_too_high', `Input image has ${mp} megapixels, maximum supported input resolution is 50 megapixels`);
  }
  if (probe.width > MAX_INPUT_SIDE || probe.height > MAX_INPUT_SIDE) {
    return fail('resolution_too_high', `Input image is ${probe.width}x${probe.height} pixels, maximum supported side is ${MAX_INPUT_SIDE} pixels`);
  }
  const out = outputSize(probe, options.size);
  const fullSize = out.width === probe.width && out.height === probe.height;
  const forModel = modelDecodeCost(probe, model);
  const forOutput = decodeCost(probe.header, { width: out.width, height: out.height, channels: 4, resize: !fullSize });
  const work = coveringSize(probe, model, out);
  const workFull = work.width === probe.width && work.height === probe.height;
  const forWork = work.width * work.height * 4 <= DECODE_ONCE_MAX_BYTES ? decodeCost(probe.header, { ...work, channels: 4, resize: !workFull }) : undefined;
  const source = Math.max(forModel.source, forOutput.source, forWork?.source ?? 0);
  if (source > maxDecode) {
    return fail(
      'resolution_too_high',
      `Input image needs ${toMB(source)} MB to decode (${describeDecode(probe.header)}), maximum supported is ${toMB(maxDecode)} MB`,
    );
  }
  let background = 0;
  if (options.bgImage) {
    const bg = await planBackground(options.bgImage, out, maxDecode);
    if (typeof bg !== 'number') return bg;
    background = bg;
  }
  // One decode at the photo's own size, the output, and the model input resized from it in memory:
  // where that input comes from a full-size decode anyway (the model enlarges the photo), or where the
  // photo is small enough to be resident while the model runs (for a 12 MP photo the addon's resize,
  // ~49 ms on one AVX2 core, costs less than shrink-on-load's second decode, ~90–140 ms).
  const single =
    fullSize && !probe.hasAlpha && (codec.resizesModelInputInMemory(probe, model.width, model.height) || out.width * out.height * 4 <= singleMaxBytes);
  const singleBytes = single
    ? addBytes(
        decodeCost(probe.header, { width: out.width, height: out.height, channels: 4, resize: false }),
        model.width * model.height * 3 + out.width * out.height * 4,
      ).total
    : 0;
  const plan: RemovalPlan = {
    inputWidth: probe.width,
    inputHeight: probe.height,
    hasAlpha: probe.hasAlpha,
    ...(probe.plainRgb ? { plainRgb: true as const } : {}),
    width: out.width,
    height: out.height,
    decodeBytes: { model: forModel.total, output: forOutput.total, background },
    decodeSource: source,
    ...(forWork ? { working: { ...work, bytes: forWork.total } } : {}),
    ...(single ? { singleDecode: { bytes: singleBytes } } : {}),
  };
  if (options.roi) {
    const r = roiToOutput(options.roi, probe, out);
    if (!r.ok) return fail(r.code, r.code === 'roi_exceeds_bounds' ? 'The roi exceeds the image bounds' : 'The roi region is empty');
    plan.roi = r.rect;
  }
  return plan;
}

/**
 * The most one decode may hold of its source: MAX_DECODE_BYTES, or less where the process's decode
 * memory is sized to a memory limit (pool/memory-fit.ts: decodeCeilingFor). A decode above it would not
 * fit beside the idle process: refused (400) before any pixel is decoded, rather than let through alone.
 */
function maxDecodeBytes(ctx: PipelineContext): number {
  return Math.min(MAX_DECODE_BYTES, ctx.decodeMemory?.ceilingBytes ?? MAX_DECODE_BYTES);
}

/** The background image is decoded to cover the output: the same budget, before any work is done. */
async function planBackground(bgImage: Uint8Array, out: { width: number; height: number }, maxDecode: number): Promise<number | RemoveFailure> {
  let probe: codec.Probe;
  try {
    probe = await codec.probe(bgImage);
  } catch (err) {
    return unreadableBackground(err, bgImage);
  }
  const pixels = probe.width * probe.height;
  if (pixels > MAX_INPUT_PIXELS) {
    return fail('failed_bg_image', `Background image has ${Math.round(pixels / 1e6)} megapixels, maximum supported is ${MAX_INPUT_PIXELS / 1e6} megapixels`);
  }
  const cost = decodeCost(probe.header, { width: out.width, height: out.height, channels: 4, resize: true });
  if (cost.source > maxDecode) {
    return fail(
      'failed_bg_image',
      `Background image needs ${toMB(cost.source)} MB to decode (${describeDecode(probe.header)}), maximum supported is ${toMB(maxDecode)} MB`,
    );
  }
  return cost.total;
}

/**
 * Take `bytes` of the process's decode memory for this task; the milliseconds waited go in the timings.
 * A photo whose decode holds its source whole (holdsSourceWhole) first makes room: the block cache's
 * kept blocks (the last model run's tensors, ~200 MB) and malloc's free pages go back, so the decode
 * budget counts from a lean process as it assumes (20 bombs through one worker: 731 MB peak with the
 * blocks kept, 543–546 with the room made). Ordinary photos keep their memory (docs/memory.md).
 */
async function holdDecodeMemory(ctx: PipelineContext, plan: RemovalPlan, slot: number | undefined, bytes: number, watch: Stopwatch): Promise<void> {
  if (holdsSourceWhole(plan)) {
    ctx.binding.releaseScratch();
    ctx.binding.trimMemory();
    if (ctx.bigDecode) ctx.bigDecode.made = true;
  }
  if (!ctx.decodeMemory || slot === undefined) return;
  const waited = await ctx.decodeMemory.acquire(slot, bytes);
  if (waited >= 0.5) watch.add('decodeWait');
}

function decodeOutput(input: Uint8Array, plan: RemovalPlan): Promise<codec.Raw> {
  const fullSize = plan.width === plan.inputWidth && plan.height === plan.inputHeight;
  const p = codec.decodeRgba(input, MAX_INPUT_PIXELS, plan.width, plan.height, fullSize);
  p.catch(() => undefined); // awaited later; never an unhandled rejection
  return p;
}

async function decodeModelInput(ctx: PipelineContext, input: Uint8Array, plan: RemovalPlan): Promise<codec.Raw | RemoveFailure> {
  const photo = { width: plan.inputWidth, height: plan.inputHeight, hasAlpha: plan.hasAlpha };
  try {
    return await codec.decodeForModel(input, MAX_INPUT_PIXELS, ctx.model.width, ctx.model.height, photo, ctx.threads);
  } catch (err) {
    return unreadable(err, input);
  }
}

/**
 * The photo at its own size as RGBA, awaited at once: a plain photo decoded by libvips into the memory
 * `into` gives for its bytes (the CPU worker's kept photo memory, the staged task's photo memory), or
 * into bytes of its own where it gives none (codec.decodeRgbaOwned: no copy to transfer it, no fresh
 * buffer where memory is kept); any other photo through sharp.
 */
async function decodeFullSize(input: Uint8Array, plan: RemovalPlan, into?: (bytes: number) => Uint8Array | undefined): Promise<codec.Raw> {
  if (plan.plainRgb) {
    const own = codec.decodeRgbaOwned(input, plan.inputWidth, plan.inputHeight, into?.(plan.inputWidth * plan.inputHeight * 4));
    if (own) return own;
  }
  return codec.decodeRgba(input, MAX_INPUT_PIXELS, plan.inputWidth, plan.inputHeight, true);
}

/** `bytes` at the start of `memory`, where it has that many. */
function viewOf(memory: ArrayBuffer | undefined, bytes: number): Uint8Array | undefined {
  return memory && memory.byteLength >= bytes ? new Uint8Array(memory, 0, bytes) : undefined;
}

/** One decode to the plan's working size; the model input and (a promise of) the output resized from it. */
async function decodeOnce(
  ctx: PipelineContext,
  input: Uint8Array,
  plan: RemovalPlan,
  working: ModelShape,
): Promise<{ modelInput: codec.Raw; rgba: Promise<codec.Raw> } | RemoveFailure> {
  let work: codec.Raw;
  try {
    const full = working.width === plan.inputWidth && working.height === plan.inputHeight;
    const kept = ctx.photoBuffer;
    work = full
      ? await decodeFullSize(input, plan, kept && ((bytes) => kept.take(bytes)))
      : await codec.decodeRgba(input, MAX_INPUT_PIXELS, working.width, working.height, false);
  } catch (err) {
    return unreadable(err, input);
  }
  const { width: mw, height: mh } = ctx.model;
  const modelInput = await codec.resizeForModel(work, mw, mh, !plan.hasAlpha, ctx.threads, ctx.modelInputBuffer?.take(mw * mh * 3));
  const same = work.width === plan.width && work.height === plan.height;
  const rgba = same ? Promise.resolve(work) : codec.resizeRgba(work, plan.width, plan.height);
  rgba.catch(() => undefined); // awaited later; never an unhandled rejection
  return { modelInput, rgba };
}

/** How one removal on the CPU path uses memory (planMemory): what goes back first, what it holds, when each decode runs. */
interface MemoryPlan {
  /** The worker's kept photo memory goes first, collected at once: this photo's output is over its bound. */
  dropKeptPhoto: boolean;
  /** The block cache's kept blocks go back before decoding: the first decode is over KEPT_BESIDE_DECODE_MAX_BYTES. */
  releaseScratch: boolean;
  /** Bytes of the process's decode memory the task holds (holdDecodeMemory). */
  holdBytes: number;
  /** Decode once to this size and resize the model input and the output from it; absent: the model input is decoded on its own. */
  once?: { width: number; height: number; bytes: number };
  /**
   * When the output is decoded: from the one decode ('once'), on a libvips thread while the model runs
   * ('overlap'), or after the model, its kept tensors handed back first ('after').
   */
  output: 'once' | 'overlap' | 'after';
}

/**
 * The memory schedule of one removal on the CPU path. The model input comes first (shrink-on-load
 * keeps it cheap). A small output-sized decode runs on a libvips thread while the model runs on this
 * one, so it hides behind inference; a big one waits until the model is done, so the photo and the
 * model's working memory are never resident together. An opaque photo at its own size
 * (plan.singleDecode) whose output decode would overlap the model anyway is decoded once, before it,
 * and the model input resized from it: one decode instead of two, at the same peak, and no libvips
 * thread beside the model's. A source that costs much to decode (held whole, or very wide) with a
 * small output is decoded once, to a working size that covers both, and resized in memory.
 */
function planMemory(ctx: PipelineContext, plan: RemovalPlan): MemoryPlan {
  const { model, output, background } = plan.decodeBytes;
  const outputBytes = plan.width * plan.height * 4;
  const modelBytes = ctx.model.width * ctx.model.height * 3;
  const overlap = outputBytes <= overlapMaxBytes(ctx) && output <= OVERLAP_DECODE_MAX_ESTIMATE;
  const single = overlap && plan.singleDecode ? { width: plan.width, height: plan.height, bytes: output } : undefined;
  const once = single ?? (overlap ? undefined : plan.working);
  const decodes = single ? output + modelBytes : overlap ? model + output : once ? once.bytes + modelBytes + outputBytes : Math.max(model, output);
  // A photo over the kept photo memory's bound: that memory goes, so that it is not resident beside
  // this photo's bigger buffers (bench:memory's peak: +14 MB with it kept).
  const kept = ctx.photoBuffer;
  return {
    dropKeptPhoto: kept !== undefined && kept.bytes > 0 && outputBytes > kept.maxBytes,
    // The single decode is the output decode that would have run beside the kept blocks anyway.
    releaseScratch: (single ? 0 : once ? once.bytes : model) > KEPT_BESIDE_DECODE_MAX_BYTES,
    holdBytes: Math.max(decodes, (once ? outputBytes : output) + background),
    ...(once ? { once: { width: once.width, height: once.height, bytes: once.bytes } } : {}),
    output: once ? 'once' : overlap ? 'overlap' : 'after',
  };
}

/** The model input and, where the memory plan decodes it before the model runs, (a promise of) the output. */
async function decodeBeforeModel(
  ctx: PipelineContext,
  input: Uint8Array,
  plan: RemovalPlan,
  memory: MemoryPlan,
): Promise<{ modelInput: codec.Raw; rgba: Promise<codec.Raw> | undefined } | RemoveFailure> {
  if (memory.once) return decodeOnce(ctx, input, plan, memory.once);
  const rgba = memory.output === 'overlap' ? decodeOutput(input, plan) : undefined;
  const modelInput = await decodeModelInput(ctx, input, plan);
  if ('ok' in modelInput) {
    await rgba?.catch(() => undefined);
    return modelInput;
  }
  return { modelInput, rgba };
}

/** Runs the model; the matte stays in the session's output tensor, where composite() reads it. */
function inferMatte(ctx: PipelineContext, session: NativeSession, modelInput: codec.Raw, options: RemoveOptions): void {
  const matte = session.infer(modelInput.data, 3);
  if (!qualityPlan(options.quality ?? ctx.quality, options).flip) return;
  // The session's output tensor is overwritten by the next run: keep this one, run the mirror image,
  // and leave the fused matte in the tensor for composite().
  const first = Float32Array.from(matte);
  mirrorRgb(modelInput.data, modelInput.width, modelInput.height);
  const mirrored = session.infer(modelInput.data, 3);
  fuseMirrored(first, mirrored, ctx.model.width, ctx.model.height);
  mirrored.set(first);
}

/** The CPU path: decode → infer → composite → encode on this thread with this worker's own session, on planMemory's schedule. */
export async function runPipeline(ctx: PipelineContext, task: RemoveTask): Promise<RemoveResult> {
  const session = ctx.session;
  if (!session) throw new Error('runPipeline needs a worker with its own model session');
  const watch = new Stopwatch();
  const { input, options } = task;
  // Decoded once up to the staged path's bound: 16 MP (4 MP lean), docs/memory.md "Decoding".
  const plan = await planRemoval(input, options, ctx.model, maxDecodeBytes(ctx), overlapMaxBytes(ctx));
  if ('ok' in plan) return plan;
  const memory = planMemory(ctx, plan);
  if (memory.dropKeptPhoto) {
    ctx.photoBuffer?.drop();
    collectGarbage();
  }
  watch.mark('probe');

  if (memory.releaseScratch) ctx.binding.releaseScratch();
  await holdDecodeMemory(ctx, plan, task.decodeSlot, memory.holdBytes, watch);
  const decoded = await decodeBeforeModel(ctx, input, plan, memory);
  if ('ok' in decoded) return decoded;
  watch.mark('decode');

  inferMatte(ctx, session, decoded.modelInput, options);
  watch.mark('infer');

  let rgba = decoded.rgba;
  if (!rgba) {
    // memory.output 'after': a big output (over 16 MP; 4 MP when lean) decodes only now, so that it and the model's working memory are never
    // resident together: the run's kept tensors go back first (`cutout remove` of a 20 MP photo peaks
    // at ~400 MB instead of ~560; the next photo faults them in again, docs/memory.md).
    ctx.binding.releaseScratch();
    rgba = decodeOutput(input, plan);
  }
  return finishRemoval(ctx, task, plan, rgba, (rgba, w, h, opts) => session.composite(rgba, w, h, opts), watch);
}

/** Staged path, stage 1: plan and the model-sized input, for an inference batch. */
export async function prepareRemoval(ctx: PipelineContext, task: RemoveTask): Promise<PrepareResult> {
  const watch = new Stopwatch();
  const plan = await planRemoval(task.input, task.options, ctx.model, maxDecodeBytes(ctx), overlapMaxBytes(ctx));
  if ('ok' in plan) return plan;
  watch.mark('probe');
  await holdDecodeMemory(ctx, plan, task.decodeSlot, plan.singleDecode?.bytes ?? plan.decodeBytes.model, watch);
  let photo: Uint8Array | undefined;
  let modelInput: codec.Raw | RemoveFailure;
  if (plan.singleDecode) {
    // The photo as stage 2 would decode it, and the model input resized from it in memory. It then
    // waits for its batch decoded: up to (photo workers + batch) × 64 MB in the pipeline.
    let rgba: codec.Raw;
    try {
      rgba = await decodeFullSize(task.input, plan, (bytes) => viewOf(task.photoMemory, bytes));
    } catch (err) {
      return unreadable(err, task.input);
    }
    modelInput = await codec.resizeForModel(rgba, ctx.model.width, ctx.model.height, true, ctx.threads);
    // A plain photo's bytes are already ours (the task's photo memory, or their own); sharp's Buffers
    // cannot be transferred: one copy.
    const ours = rgba.transferable || (task.photoMemory !== undefined && rgba.data.buffer === task.photoMemory);
    photo = ours ? new Uint8Array(rgba.data.buffer, rgba.data.byteOffset, rgba.data.byteLength) : new Uint8Array(rgba.data);
  } else {
    modelInput = await decodeModelInput(ctx, task.input, plan);
    if ('ok' in modelInput) return modelInput;
  }
  watch.mark('decode');
  watch.total();
  // sharp's raw output is a pooled-or-not Buffer: copy it once into bytes of its own to transfer
  // (the addon's resize already gives bytes of their own).
  const bytes = modelInput.transferable ? modelInput.data : new Uint8Array(modelInput.data);
  const unusedMemory = task.photoMemory && photo?.buffer !== task.photoMemory ? task.photoMemory : undefined;
  return {
    ok: true,
    plan,
    modelInput: bytes,
    input: task.input,
    ...(photo ? { photo } : {}),
    ...(unusedMemory ? { unusedMemory } : {}),
    timings: watch.timings,
  };
}

/** Staged path, stage 2: the photo at output size, the batch's mask for it, layout and encoding. */
export async function finishStaged(ctx: PipelineContext, task: FinishTask): Promise<RemoveResult> {
  const { mask, plan } = task;
  const { width: mw, height: mh } = ctx.model;
  if (mask.length !== mw * mh) throw new Error(`Expected a ${mw}x${mh} mask but received ${mask.length} values`);
  const watch = new Stopwatch({ ...task.timings });
  await holdDecodeMemory(ctx, plan, task.decodeSlot, plan.decodeBytes.output + plan.decodeBytes.background, watch);
  const photo = task.photo;
  if (photo && photo.length !== plan.width * plan.height * 4)
    throw new Error(`Expected a ${plan.width}x${plan.height} RGBA photo but received ${photo.length} bytes`);
  const rgba = photo
    ? Promise.resolve({ data: Buffer.from(photo.buffer, photo.byteOffset, photo.byteLength), width: plan.width, height: plan.height, channels: 4 })
    : decodeOutput(task.input, plan);
  return finishRemoval(ctx, task, plan, rgba, (rgba, w, h, opts) => ctx.binding.compositeMask(rgba, w, h, mask, mw, mh, opts), watch);
}

type ApplyMask = (rgba: Uint8Array, width: number, height: number, options: CompositeOptions) => NativeBox;

async function finishRemoval(
  ctx: PipelineContext,
  task: RemoveTask,
  plan: RemovalPlan,
  rgbaPromise: Promise<codec.Raw>,
  applyMask: ApplyMask,
  watch: Stopwatch,
): Promise<RemoveResult> {
  const { options } = task;
  let rgba: codec.Raw;
  try {
    rgba = await rgbaPromise;
  } catch (err) {
    return unreadable(err, task.input);
  }
  watch.mark('decodeOutput');

  // The input's own transparency stays transparent: keep it to multiply in after compositing.
  const inputAlpha = plan.hasAlpha ? extractAlpha(ctx.binding, rgba) : undefined;
  const stages = qualityPlan(options.quality ?? ctx.quality, options);
  const box = applyMask(rgba.data, rgba.width, rgba.height, {
    refine: stages.refine,
    matting: stages.matting,
    decontaminate: stages.decontaminate,
    threads: ctx.threads,
    ...(plan.roi ? { roi: plan.roi } : {}),
  });
  if (inputAlpha) multiplyAlpha(rgba.data, inputAlpha);
  watch.mark('composite');

  let foreground = box;
  let result = rgba;
  if (options.crop && box.width > 0) {
    const rect = cropRect(box, options.cropMargin);
    result = await codec.cropPad(result, rect);
    foreground = { top: box.top - rect.top, left: box.left - rect.left, width: box.width, height: box.height };
  }
  if ((options.scale !== undefined || options.position) && foreground.width > 0) {
    const subject = await codec.cropPad(result, foreground);
    const canvas = { width: result.width, height: result.height };
    const placed = placeSubject(foreground, canvas, options.scale, options.position);
    result = await codec.placeOnCanvas(subject, placed, canvas);
    foreground = placed;
  }
  watch.mark('layout');

  // After layout, so the shadow lies under the subject where it ends up (crop keeps the subject's
  // box: the shadow is clipped by it); before the background, which it darkens.
  if (options.shadow && options.shadow.opacity > 0) {
    ctx.binding.drawShadow(result.data, result.width, result.height, options.shadow);
    watch.mark('shadow');
  }

  if (options.bgImage) {
    let bg: codec.Raw;
    try {
      bg = await codec.decodeBackground(options.bgImage, result.width, result.height);
    } catch (err) {
      return unreadableBackground(err, options.bgImage);
    }
    ctx.binding.blendOver(result.data, bg.data);
  } else if (options.bgColor) {
    const [r, g, b, a] = options.bgColor;
    ctx.binding.flattenOnColor(result.data, r, g, b, a);
  }
  watch.mark('background');

  const encoded = await encode(ctx, result, options);
  watch.mark('encode');
  watch.total();

  return {
    ok: true,
    data: encoded.data,
    contentType: encoded.contentType,
    width: result.width,
    height: result.height,
    inputWidth: plan.inputWidth,
    inputHeight: plan.inputHeight,
    // The one place the box gets its meaning (remove.bg's); the library and the HTTP API pass it on.
    foreground: atInputResolution(foreground, { width: plan.inputWidth, height: plan.inputHeight }, plan),
    timings: watch.timings,
  };
}

function encode(ctx: PipelineContext, result: codec.Raw, options: RemoveOptions): Promise<codec.Encoded> {
  const png = { threads: ctx.threads };
  if (options.channels === 'alpha') {
    const alpha = Buffer.allocUnsafe(result.width * result.height);
    ctx.binding.extractAlpha(result.data, alpha);
    const mask: codec.Raw = { data: alpha, width: result.width, height: result.height, channels: 1 };
    return options.format === 'jpg' ? codec.encodeJpeg(mask) : options.format === 'webp' ? codec.encodeWebp(mask) : codec.encodePng(mask, png);
  }
  if (options.format === 'zip') return codec.encodeZip(result, png);
  if (options.format === 'jpg' || (options.format === 'auto' && !codec.hasTransparency(result))) return codec.encodeJpeg(result);
  if (options.format === 'webp') return codec.encodeWebp(result);
  return codec.encodePng(result, png);
}

function extractAlpha(binding: NativeBinding, rgba: codec.Raw): Buffer {
  const alpha = Buffer.allocUnsafe(rgba.width * rgba.height);
  binding.extractAlpha(rgba.data, alpha);
  return alpha;
}

function multiplyAlpha(rgba: Buffer, alpha: Buffer): void {
  for (let i = 0, j = 3; i < alpha.length; i++, j += 4) {
    const a = alpha[i]!;
    if (a !== 255) rgba[j] = Math.round((rgba[j]! * a) / 255);
  }
}
