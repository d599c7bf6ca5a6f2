// One removal, start to finish, on the calling worker thread: probe → decode → infer → composite →
// background → crop/placement → encode. Typed failures are returned, never thrown.
import type { NativeBinding, NativeSession } from '../native/binding.js';
import { MAX_INPUT_PIXELS, type RemoveResult, type RemoveTask } from '../pool/task.js';
import { describeFileType, sniffImageType } from '../image/image-type.js';
import * as codec from './codec.js';
import { cropRect, outputSize, placeSubject, roiToOutput } from './geometry.js';

export interface ModelShape {
  width: number;
  height: number;
}

export interface PipelineContext {
  binding: NativeBinding;
  session: NativeSession;
  model: ModelShape;
}

function fail(code: Extract<RemoveResult, { ok: false }>['code'], message: string): RemoveResult {
  return { ok: false, code, message };
}

/**
 * Largest output (RGBA bytes) decoded while the model runs. Bigger photos are decoded after it: at
 * 20 MP that keeps 80 MB off the peak for ~110 ms more per photo (docs/memory.md).
 */
export const OVERLAP_DECODE_MAX_BYTES = 16 * 1024 * 1024;

export async function runPipeline(ctx: PipelineContext, task: RemoveTask): Promise<RemoveResult> {
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  const mark = (name: string, since: number): number => {
    const now = performance.now();
    timings[name] = Math.round((now - since) * 10) / 10;
    return now;
  };
  const { input, options } = task;

  if (!sniffImageType(input)) return fail('invalid_file_type', `Expected jpg/png/webp, received ${describeFileType(input)}`);
  let probe: codec.Probe;
  try {
    probe = await codec.probe(input);
  } catch (err) {
    return fail('failed_to_read_image', `Failed to read image: ${(err as Error).message}`);
  }
  const inputPixels = probe.width * probe.height;
  if (inputPixels > MAX_INPUT_PIXELS) {
    const mp = Math.round(inputPixels / 1e6);
    return fail('resolution_too_high', `Input image has ${mp} megapixels, maximum supported input resolution is 50 megapixels`);
  }
  const out = outputSize(probe, options.size);
  let roi: [number, number, number, number] | undefined;
  if (options.roi) {
    const r = roiToOutput(options.roi, probe, out);
    if (!r.ok) return fail(r.code, r.code === 'roi_exceeds_bounds' ? 'The roi exceeds the image bounds' : 'The roi region is empty');
    roi = r.rect;
  }
  let t = mark('probe', t0);

  // The model input comes first (shrink-on-load keeps it cheap). A small output-sized decode runs on
  // a libvips thread while the model runs on this one, so it hides behind inference; a big one waits
  // until the model is done, so the photo and the model's working memory are never resident together.
  const fullSize = out.width === probe.width && out.height === probe.height;
  const decodeOutput = (): Promise<codec.Raw> => {
    const p = codec.decodeRgba(input, MAX_INPUT_PIXELS, out.width, out.height, fullSize);
    p.catch(() => undefined); // awaited below; never an unhandled rejection
    return p;
  };
  let rgbaPromise = out.width * out.height * 4 <= OVERLAP_DECODE_MAX_BYTES ? decodeOutput() : undefined;
  let modelInput: codec.Raw;
  try {
    modelInput = await codec.decodeForModel(input, MAX_INPUT_PIXELS, ctx.model.width, ctx.model.height);
  } catch (err) {
    await rgbaPromise?.catch(() => undefined);
    return fail('failed_to_read_image', `Failed to read image: ${(err as Error).message}`);
  }
  t = mark('decode', t);
  ctx.session.infer(modelInput.data, 3);
  t = mark('infer', t);
  rgbaPromise ??= decodeOutput();
  let rgba: codec.Raw;
  try {
    rgba = await rgbaPromise;
  } catch (err) {
    return fail('failed_to_read_image', `Failed to read image: ${(err as Error).message}`);
  }
  t = mark('decodeOutput', t);

  // The input's own transparency stays transparent: keep it to multiply in after compositing.
  const inputAlpha = probe.hasAlpha ? extractAlpha(ctx.binding, rgba) : undefined;
  const box = ctx.session.composite(rgba.data, rgba.width, rgba.height, {
    refine: options.refine,
    matting: options.matting,
    decontaminate: options.decontaminate,
    ...(roi ? { roi } : {}),
  });
  if (inputAlpha) multiplyAlpha(rgba.data, inputAlpha);
  t = mark('composite', t);

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
  t = mark('layout', t);

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
  t = mark('background', t);

  let encoded: codec.Encoded;
  if (options.channels === 'alpha') {
    const alpha = Buffer.allocUnsafe(result.width * result.height);
    ctx.binding.extractAlpha(result.data, alpha);
    const mask: codec.Raw = { data: alpha, width: result.width, height: result.height, channels: 1 };
    encoded = options.format === 'jpg' ? await codec.encodeJpeg(mask) : options.format === 'webp' ? await codec.encodeWebp(mask) : await codec.encodePng(mask);
  } else if (options.format === 'zip') {
    encoded = await codec.encodeZip(result);
  } else if (options.format === 'jpg' || (options.format === 'auto' && !codec.hasTransparency(result))) {
    encoded = await codec.encodeJpeg(result);
  } else if (options.format === 'webp') {
    encoded = await codec.encodeWebp(result);
  } else {
    encoded = await codec.encodePng(result);
  }
  mark('encode', t);
  timings.total = Math.round((performance.now() - t0) * 10) / 10;

  return {
    ok: true,
    data: encoded.data,
    contentType: encoded.contentType,
    width: result.width,
    height: result.height,
    inputWidth: probe.width,
    inputHeight: probe.height,
    foreground,
    timings,
  };
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
