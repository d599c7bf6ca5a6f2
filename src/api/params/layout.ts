// The layout fields' syntax: lengths, crop_margin, roi, scale, position (REMOVEBG-API.md §1). Pure.
// Only what can be decided without the image is checked here; the worker resolves the rest.

import { MAX_CROP_MARGIN, MIN_SCALE, type Length, type Margins, type Roi } from '../../domain/removal.js';
import { ApiError, invalidParameter } from '../errors.js';

const LENGTH_RE = /^(\d+(?:\.\d+)?|\.\d+)(px|%)?$/i;

/** `12px`, `10%`, or a unitless `0` (the PyPI client sends "0 0 100% 100%"). */
export function parseLength(token: string): Length | null {
  const m = LENGTH_RE.exec(token);
  if (!m) return null;
  const value = Number(m[1]);
  if (!Number.isFinite(value)) return null;
  const unit = m[2]?.toLowerCase();
  if (unit === undefined) return value === 0 ? { value: 0, unit: 'px' } : null;
  return { value, unit: unit === '%' ? '%' : 'px' };
}

const splitTokens = (text: string): string[] => text.split(/[\s,]+/).filter((t) => t !== '');

export function parseCropMargin(text: string): Margins {
  const fail = () => invalidParameter('crop_margin', `1, 2 or 4 values in px or % (each at most ${MAX_CROP_MARGIN.px}px or ${MAX_CROP_MARGIN.percent}%)`, text);
  const tokens = splitTokens(text);
  if (tokens.length !== 1 && tokens.length !== 2 && tokens.length !== 4) throw fail();
  const values = tokens.map((t) => {
    const len = parseLength(t);
    if (
      !len ||
      (len.unit === 'px' && (len.value > MAX_CROP_MARGIN.px || !Number.isInteger(len.value))) ||
      (len.unit === '%' && len.value > MAX_CROP_MARGIN.percent)
    )
      throw fail();
    return len;
  });
  // CSS order: top right bottom left; 1 value = all sides, 2 = vertical horizontal.
  const [a, b = a, c = a, d = b] = values as [Length, Length?, Length?, Length?];
  return { top: a, right: b!, bottom: c!, left: d! };
}

export function parseRoi(text: string): Roi {
  const fail = () => invalidParameter('roi', "'x1 y1 x2 y2' with each value in px or %", text);
  const tokens = splitTokens(text);
  if (tokens.length !== 4) throw fail();
  const [x1, y1, x2, y2] = tokens.map((t) => {
    const len = parseLength(t);
    if (!len || (len.unit === '%' && len.value > 100)) throw fail();
    return len;
  }) as [Length, Length, Length, Length];
  // Only decidable without the image when both ends share a unit; the worker checks the rest.
  if ((x1.unit === x2.unit && x1.value >= x2.value) || (y1.unit === y2.unit && y1.value >= y2.value)) {
    throw new ApiError(400, 'roi_region_empty', 'ROI region is empty', `The region '${text}' contains no pixels.`);
  }
  return { x1, y1, x2, y2 };
}

const PERCENT_RE = /^(\d+(?:\.\d+)?|\.\d+)%$/;

export function parseScale(text: string): number | undefined {
  if (text.toLowerCase() === 'original') return undefined;
  const m = PERCENT_RE.exec(text);
  const pct = m ? Number(m[1]) : NaN;
  if (!(pct >= MIN_SCALE * 100 && pct <= 100)) throw invalidParameter('scale', `a percentage from '${MIN_SCALE * 100}%' to '100%' or 'original'`, text);
  return pct / 100;
}

export function parsePosition(text: string): { x: number; y: number } | undefined {
  const lower = text.toLowerCase();
  if (lower === 'original') return undefined;
  if (lower === 'center') return { x: 50, y: 50 };
  const fail = () => invalidParameter('position', "'original', 'center', 'N%' or 'N% M%' (0% to 100%)", text);
  const tokens = splitTokens(text);
  if (tokens.length < 1 || tokens.length > 2) throw fail();
  const values = tokens.map((t) => {
    const m = PERCENT_RE.exec(t);
    const v = m ? Number(m[1]) : NaN;
    if (!(v >= 0 && v <= 100)) throw fail();
    return v;
  });
  const x = values[0]!;
  return { x, y: values[1] ?? x };
}
