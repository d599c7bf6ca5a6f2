// One removal on the calling worker thread, in stages: plan (probe, sizes, ROI) → decode for the
// model → infer → decode at output size → mask into alpha → background → crop/placement → encode.
// runPipeline does them all on one thread (the CPU path); prepareRemoval and finishRemoval are the
// two halves of the staged path, where the inference runs in a batch elsewhere (src/pool/staged-pool.ts).
// Typed failures are returned, never thrown.
import type { CompositeOptions, NativeBinding, NativeBox, NativeSession } from '../native/binding.js';
import { MAX_INPUT_PIXELS, MAX_INPUT_SIDE, type RemoveOptions } from '../domain/removal.js';
import type { FinishTask, PrepareResult, RemovalPlan, RemoveFailure, RemoveResult, RemoveTask } from '../pool/task.js';
import * as codec from './codec.js';
import { atInputResolution, cropRect, outputSize, placeSubject, roiToOutput } from './geometry.js';

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
}

function fail(code: RemoveFailure['code'], message: string): RemoveFailure {
  return { ok: false, code, message };
}

/**
 * Largest output (RGBA bytes) decoded while the model runs. Bigger photos are decoded after it: at
 * 20 MP that keeps 80 MB off the peak for ~110 ms more per photo (docs/memory.md).
 */
export const OVERLAP_DECODE_MAX_BYTES = 16 * 1024 * 1024;

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
  total(): void {
    this.timings.total = Math.round((performance.now() - this.start) * 10) / 10 + (this.timings.total ?? 0);
  }
}

/** What libvips may decode here; the callers' edges (api/image-input.ts, lib/remove.ts) sniffed the bytes already. */
const DECODABLE = new Set(['jpeg', 'png', 'webp']);

/** Header-only look at the photo: format, oriented size, pixel cap, output size, ROI. */
async function planRemoval(input: Uint8Array, options: RemoveOptions): Promise<RemovalPlan | RemoveFailure> {
  let probe: codec.Probe;
  try {
    probe = await codec.probe(input);
  } catch (err) {
    return fail('failed_to_read_image', `Failed to read image: ${(err as Error).message}`);
  }
  // Not a second sniff: the decoder names what it read. A pool caller that skipped the edge gets a typed failure.
  if (!DECODABLE.has(probe.format)) return fail('invalid_file_type', `Expected jpg/png/webp, received ${probe.format}`);
  const inputPixels = probe.width * probe.height;
  if (inputPixels > MAX_INPUT_PIXELS) {
    const mp = Math.round(inputPixels / 1e6);
    return fail('resolution_too_high', `Input image has ${mp} megapixels, maximum supported input resolution is 50 megapixels`);
  }
  if (probe.width > MAX_INPUT_SIDE || probe.height > MAX_INPUT_SIDE) {
    return fail('resolution_too_high', `Input image is ${probe.width}x${probe.height} pixels, maximum supported side is ${MAX_INPUT_SIDE} pixels`);
  }
  const out = outputSize(probe, options.size);
  const plan: RemovalPlan = { inputWidth: probe.width, inputHeight: probe.height, hasAlpha: probe.hasAlpha, width: out.width, height: out.height };
  if (options.roi) {
    const r = roiToOutput(options.roi, probe, out);
    if (!r.ok) return fail(r.code, r.code === 'roi_exceeds_bounds' ? 'The roi exceeds the image bounds' : 'The roi region is empty');
    plan.roi = r.rect;
  }
  return plan;
}

function decodeOutput(input: Uint8Array, plan: RemovalPlan): Promise<codec.Raw> {
  const fullSize = plan.width === plan.inputWidth && plan.height === plan.inputHeight;
  const p = codec.decodeRgba(input, MAX_INPUT_PIXELS, plan.width, plan.height, fullSize);
  p.catch(() => undefined); // awaited later; never an unhandled rejection
  return p;
}

async function decodeModelInput(input: Uint8Array, model: ModelShape): Promise<codec.Raw | RemoveFailure> {
  try {
    return await codec.decodeForModel(input, MAX_INPUT_PIXELS, model.width, model.height);
  } catch (err) {
    return fail('failed_to_read_image', `Failed to read image: ${(err as Error).message}`);
  }
}

/** The CPU path: every stage on this thread with this worker's own session. */
export async function runPipeline(ctx: PipelineContext, task: RemoveTask): Promise<RemoveResult> {
  const session = ctx.session;
  if (!session) throw new Error('runPipeline needs a worker with its own model session');
  const watch = new Stopwatch();
  const { input, options } = task;
  const plan = await planRemoval(input, options);
  if ('ok' in plan) return plan;
  watch.mark('probe');

  // The model input comes first (shrink-on-load keeps it cheap). A small output-sized decode runs on
  // a libvips thread while the model runs on this one, so it hides behind inference; a big one waits
  // until the model is done, so the photo and the model's working memory are never resident together.
  let rgbaPromise = plan.width * plan.height * 4 <= OVERLAP_DECODE_MAX_BYTES ? decodeOutput(input, plan) : undefined;
  const modelInput = await decodeModelInput(input, ctx.model);
  if ('ok' in modelInput) {
    await rgbaPromise?.catch(() => undefined);
    return modelInput;
  }
  watch.mark('decode');
  session.infer(modelInput.data, 3);
  watch.mark('infer');
  rgbaPromise ??= decodeOutput(input, plan);
  return finishRemoval(ctx, task, plan, rgbaPromise, (rgba, w, h, opts) => session.composite(rgba, w, h, opts), watch);
}

/** Staged path, stage 1: plan and the model-sized input, for an inference batch. */
export async function prepareRemoval(ctx: PipelineContext, task: RemoveTask): Promise<PrepareResult> {
  const watch = new Stopwatch();
  const plan = await planRemoval(task.input, task.options);
  if ('ok' in plan) return plan;
  watch.mark('probe');
  const modelInput = await decodeModelInput(task.input, ctx.model);
  if ('ok' in modelInput) return modelInput;
  watch.mark('decode');
  watch.total();
  // sharp's raw output is a pooled-or-not Buffer: copy it once into bytes of its own to transfer.
  return { ok: true, plan, modelInput: new Uint8Array(modelInput.data), input: task.input, timings: watch.timings };
}

/** Staged path, stage 2: the photo at output size, the batch's mask for it, layout and encoding. */
export function finishStaged(ctx: PipelineContext, task: FinishTask): Promise<RemoveResult> {
  const { mask, plan } = task;
  const { width: mw, height: mh } = ctx.model;
  if (mask.length !== mw * mh) throw new Error(`Expected a ${mw}x${mh} mask but received ${mask.length} values`);
  const watch = new Stopwatch({ ...task.timings });
  return finishRemoval(ctx, task, plan, decodeOutput(task.input, plan), (rgba, w, h, opts) => ctx.binding.compositeMask(rgba, w, h, mask, mw, mh, opts), watch);
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
    return fail('failed_to_read_image', `Failed to read image: ${(err as Error).message}`);
  }
  watch.mark('decodeOutput');

  // The input's own transparency stays transparent: keep it to multiply in after compositing.
  const inputAlpha = plan.hasAlpha ? extractAlpha(ctx.binding, rgba) : undefined;
  const box = applyMask(rgba.data, rgba.width, rgba.height, {
    refine: options.refine,
    matting: options.matting,
    decontaminate: options.decontaminate,
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

  if (options.bgImage) {
    let bg: codec.Raw;
    try {
      bg = await codec.decodeBackground(options.bgImage, result.width, result.height);
    } catch (err) {
      return fail('failed_bg_image', `Failed to read background image: ${(err as Error).message}`);
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
