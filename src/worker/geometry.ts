// Pure size and placement arithmetic for the pipeline: size tiers, ROI, crop, scale and position.
import { TIER_MAX_PIXELS, type Box, type Length, type Margins, type Roi, type SizeTier } from '../domain/removal.js';

export interface Size {
  width: number;
  height: number;
}

/** Largest size with the input's aspect ratio and at most the tier's pixel count; never upscaled. */
export function outputSize(input: Size, tier: SizeTier): Size {
  const max = TIER_MAX_PIXELS[tier];
  const pixels = input.width * input.height;
  if (pixels <= max) return { width: input.width, height: input.height };
  const scale = Math.sqrt(max / pixels);
  let width = Math.max(1, Math.floor(input.width * scale));
  let height = Math.max(1, Math.floor(input.height * scale));
  // Rounding can still leave us a row over the cap on extreme aspect ratios.
  while (width * height > max) {
    if (width >= height) width--;
    else height--;
  }
  return { width, height };
}

export function resolveLength(l: Length, reference: number): number {
  return l.unit === '%' ? (l.value / 100) * reference : l.value;
}

export type RoiResult = { ok: true; rect: [number, number, number, number] } | { ok: false; code: 'roi_exceeds_bounds' | 'roi_region_empty' };

/** ROI in input pixels → [x1,y1,x2) rectangle in output pixels. */
export function roiToOutput(roi: Roi, input: Size, output: Size): RoiResult {
  const x1 = resolveLength(roi.x1, input.width);
  const y1 = resolveLength(roi.y1, input.height);
  const x2 = resolveLength(roi.x2, input.width);
  const y2 = resolveLength(roi.y2, input.height);
  if (x1 < 0 || y1 < 0 || x2 > input.width || y2 > input.height) return { ok: false, code: 'roi_exceeds_bounds' };
  if (x2 <= x1 || y2 <= y1) return { ok: false, code: 'roi_region_empty' };
  const sx = output.width / input.width;
  const sy = output.height / input.height;
  return {
    ok: true,
    rect: [Math.floor(x1 * sx), Math.floor(y1 * sy), Math.ceil(x2 * sx), Math.ceil(y2 * sy)].map((v, i) =>
      Math.min(Math.max(0, v), i % 2 === 0 ? output.width : output.height),
    ) as [number, number, number, number],
  };
}

/**
 * Crop rectangle around the subject with margins (remove.bg: each side at most 50% of the subject
 * size or 500 px). The rectangle may extend past the image; the caller pads with transparency.
 */
export function cropRect(subject: Box, margins: Margins | undefined): Box {
  const side = (l: Length | undefined, ref: number): number => {
    if (!l) return 0;
    const v = Math.round(resolveLength(l, ref));
    return Math.max(0, Math.min(v, Math.round(ref * 0.5), 500));
  };
  const top = side(margins?.top, subject.height);
  const bottom = side(margins?.bottom, subject.height);
  const left = side(margins?.left, subject.width);
  const right = side(margins?.right, subject.width);
  return {
    top: subject.top - top,
    left: subject.left - left,
    width: subject.width + left + right,
    height: subject.height + top + bottom,
  };
}

/**
 * The foreground box as remove.bg reports it (domain/removal.ts: Box): `box` in the result's pixels,
 * expressed at the input's resolution, i.e. scaled by input ÷ output size (the size tier's downscale;
 * 1 when there was none). Crop, scale and position happen after that downscale, in output pixels, so
 * one factor serves every layout: without one, the result is the subject's box in the input photo.
 */
export function atInputResolution(box: Box, input: Size, output: Size): Box {
  if (input.width === output.width && input.height === output.height) return box;
  const sx = input.width / output.width;
  const sy = input.height / output.height;
  return {
    top: Math.round(box.top * sy),
    left: Math.round(box.left * sx),
    width: Math.round(box.width * sx),
    height: Math.round(box.height * sy),
  };
}

/**
 * Where the subject goes on a canvas of `canvas` size: scaled so it fills `scale` of the canvas
 * (fit inside, aspect kept) and placed at `position` percentages of the free space.
 */
export function placeSubject(subject: Box, canvas: Size, scale: number | undefined, position: { x: number; y: number } | undefined): Box {
  let width = subject.width;
  let height = subject.height;
  if (scale !== undefined) {
    const f = Math.min((canvas.width * scale) / subject.width, (canvas.height * scale) / subject.height);
    width = Math.max(1, Math.round(subject.width * f));
    height = Math.max(1, Math.round(subject.height * f));
  }
  const pos = position ?? (scale !== undefined ? { x: 50, y: 50 } : undefined);
  if (!pos) return { top: subject.top, left: subject.left, width, height };
  return {
    left: Math.round(((canvas.width - width) * pos.x) / 100),
    top: Math.round(((canvas.height - height) * pos.y) / 100),
    width,
    height,
  };
}
