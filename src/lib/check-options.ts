// The library's edge for options: a JavaScript caller can pass anything, and a value the worker does not
// expect would otherwise surface as an internal_error with a libvips message (size 'auto' gave
// "Expected positive integer … for width but received NaN"). Every RemoveOptions field is checked
// here against the domain's vocabulary and limits, as the HTTP API (api/params/) and the CLI check
// theirs; what needs the image (a ROI inside it, a non-empty region) is the worker's to refuse.

import {
  CHANNELS,
  MAX_CROP_MARGIN,
  MIN_SCALE,
  OUTPUT_FORMATS,
  parseQuality,
  QUALITY_LEVELS,
  SHADOW_TYPES,
  SIZE_TIERS,
  type Length,
} from '../domain/removal.js';
import type { RemoveInputOptions } from './remove-api.js';

const BOOLEAN_OPTIONS = ['crop', 'refine', 'matting', 'decontaminate'] as const;

/** How a bad value is shown: its text (objects as JSON), cut at 60 characters, and its type. */
function shown(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'object' && value !== null && !(value instanceof Uint8Array) ? JSON.stringify(value) : String(value);
  } catch {
    text = String(value);
  }
  return `${text.length > 60 ? `${text.slice(0, 60)}…` : text} of type ${typeof value}`;
}

function invalid(name: string, expected: string, value: unknown): TypeError {
  return Object.assign(new TypeError(`Expected ${expected} for ${name} but received ${shown(value)}`), { code: 'ERR_INVALID_ARG_TYPE' });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const inRange = (v: unknown, lo: number, hi: number): v is number => typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi;

/** A Length `{ value, unit }` within `maxPx` pixels (whole ones when `wholePx`) or `maxPercent` %. */
function isLength(v: unknown, maxPx: number, maxPercent: number, wholePx: boolean): v is Length {
  if (!isRecord(v)) return false;
  if (v.unit === 'px') return inRange(v.value, 0, maxPx) && (!wholePx || Number.isInteger(v.value));
  return v.unit === '%' && inRange(v.value, 0, maxPercent);
}

/** `quality`, where a caller names one (remove options, createRemover's pool options). */
export function checkQuality(value: unknown, name: string): void {
  if (value !== undefined && parseQuality(value) === undefined) throw invalid(name, `one of ${QUALITY_LEVELS.join(', ')}`, value);
}

/** Throws a TypeError (code ERR_INVALID_ARG_TYPE) naming the first option that is not a valid value. */
export function checkRemoveOptions(options: RemoveInputOptions): void {
  const o = options as Record<keyof RemoveInputOptions, unknown>;
  const oneOf = (name: 'size' | 'format' | 'channels', allowed: readonly string[]) => {
    if (o[name] !== undefined && !allowed.includes(o[name] as string)) throw invalid(name, `one of ${allowed.join(', ')}`, o[name]);
  };
  oneOf('size', SIZE_TIERS);
  oneOf('format', OUTPUT_FORMATS);
  oneOf('channels', CHANNELS);
  for (const name of BOOLEAN_OPTIONS) {
    if (o[name] !== undefined && typeof o[name] !== 'boolean') throw invalid(name, 'a boolean', o[name]);
  }
  checkQuality(o.quality, 'quality');
  if (o.bgColor !== undefined && !(Array.isArray(o.bgColor) && o.bgColor.length === 4 && o.bgColor.every((c) => inRange(c, 0, 255) && Number.isInteger(c)))) {
    throw invalid('bgColor', '[r, g, b, a] with integers from 0 to 255', o.bgColor);
  }
  if (o.bgImage !== undefined && !(o.bgImage instanceof Uint8Array)) throw invalid('bgImage', 'a Uint8Array or Buffer', o.bgImage);
  if (o.cropMargin !== undefined) {
    const m = o.cropMargin;
    const side = (v: unknown) => isLength(v, MAX_CROP_MARGIN.px, MAX_CROP_MARGIN.percent, true);
    if (!(isRecord(m) && side(m.top) && side(m.right) && side(m.bottom) && side(m.left))) {
      throw invalid(
        'cropMargin',
        `{ top, right, bottom, left } lengths ({ value, unit: 'px' } up to ${MAX_CROP_MARGIN.px} whole pixels, or '%' up to ${MAX_CROP_MARGIN.percent})`,
        m,
      );
    }
  }
  if (o.scale !== undefined && !inRange(o.scale, MIN_SCALE, 1)) throw invalid('scale', `a number from ${MIN_SCALE} to 1`, o.scale);
  if (o.position !== undefined && !(isRecord(o.position) && inRange(o.position.x, 0, 100) && inRange(o.position.y, 0, 100))) {
    throw invalid('position', '{ x, y } percentages from 0 to 100', o.position);
  }
  if (o.shadow !== undefined) {
    const sh = o.shadow;
    // The worker draws `type` as given, so the kind's case is exact here ('3D'); opacity 0 is "no shadow", said by leaving it out.
    if (!(isRecord(sh) && SHADOW_TYPES.includes(sh.type as never) && inRange(sh.opacity, 1, 100))) {
      throw invalid('shadow', `{ type: ${SHADOW_TYPES.join(' | ')}, opacity: a number from 1 to 100 }`, sh);
    }
  }
  if (o.roi !== undefined) {
    const r = o.roi;
    const end = (v: unknown) => isLength(v, Number.MAX_SAFE_INTEGER, 100, false);
    if (!(isRecord(r) && end(r.x1) && end(r.y1) && end(r.x2) && end(r.y2))) {
      throw invalid('roi', "{ x1, y1, x2, y2 } lengths ({ value, unit: 'px' } or '%' up to 100)", r);
    }
  }
}
