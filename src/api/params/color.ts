// bg_color's syntax: 3/4/6/8 hex digits with an optional `#`, a CSS colour name, or `transparent`. Pure.

import { invalidParameter } from '../errors.js';
import { CSS_COLORS } from './css-colors.js';

/** A bg_color value → straight RGBA 0..255. */
export function parseBgColor(text: string): [number, number, number, number] {
  const lower = text.toLowerCase();
  if (lower === 'transparent') return [0, 0, 0, 0];
  const named = CSS_COLORS.get(lower);
  if (named !== undefined) return [(named >> 16) & 255, (named >> 8) & 255, named & 255, 255];
  const hex = lower.startsWith('#') ? lower.slice(1) : lower;
  if (/^[0-9a-f]+$/.test(hex)) {
    if (hex.length === 3 || hex.length === 4) {
      const d = [...hex].map((c) => parseInt(c + c, 16));
      return [d[0]!, d[1]!, d[2]!, d[3] ?? 255];
    }
    if (hex.length === 6 || hex.length === 8) {
      const d = hex.match(/../g)!.map((p) => parseInt(p, 16));
      return [d[0]!, d[1]!, d[2]!, d[3] ?? 255];
    }
  }
  throw invalidParameter('bg_color', 'a hex colour with 3, 4, 6 or 8 digits or a colour name', text);
}
