// Fields remove.bg clients send that cutout accepts and never acts on (it has no classifier and no
// shadows): type, type_level, semitransparency, add_shadow, shadow_type, shadow_opacity (plain or per
// foreground class) and shadow_method (removed upstream 2021-04-13). Each is validated, so a bad value
// gets remove.bg's per-parameter 400, and then dropped. Pure.

import { isFilePart, type RawFields, type RawValue } from '../../http/fields.js';
import { invalidParameter } from '../errors.js';
import { readBoolean, readEnum, readText } from './fields.js';

const TYPES = { auto: 'auto', person: 'person', product: 'product', car: 'car', animal: 'animal', graphic: 'graphic', transportation: 'transportation' } as const;
const TYPE_LEVELS = { none: 'none', '1': '1', '2': '2', latest: 'latest' } as const;
const SHADOW_TYPES = { car: 'car', '3d': '3D', drop: 'drop', none: 'none', auto: 'auto' } as const;
const SHADOW_METHODS = { legacy: 'legacy', latest: 'latest' } as const;
/** Classes a per-type shadow setting may name (`shadow_type[car]=…`). */
const FOREGROUND_CLASSES = new Set(['person', 'product', 'animal', 'car', 'car_interior', 'car_part', 'transportation', 'graphic', 'graphics', 'other']);

/** Throws remove.bg's 400 for a bad value of any accepted-but-ignored field; returns nothing. */
export function checkCompatFields(fields: RawFields): void {
  readEnum(fields, 'type', TYPES, 'auto');
  readEnum(fields, 'type_level', TYPE_LEVELS, '1');
  readBoolean(fields, 'semitransparency', true);
  readBoolean(fields, 'add_shadow', false);
  checkPerType(fields, 'shadow_type', (text) => {
    if (SHADOW_TYPES[text.toLowerCase() as keyof typeof SHADOW_TYPES] === undefined) {
      throw invalidParameter('shadow_type', `one of ${Object.values(SHADOW_TYPES).join(', ')}`, text);
    }
  });
  checkPerType(fields, 'shadow_opacity', (text) => {
    if (text.toLowerCase() === 'auto') return;
    const n = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(n >= 0 && n <= 100)) throw invalidParameter('shadow_opacity', "an integer from 0 to 100 or 'auto'", text);
  });
  readEnum(fields, 'shadow_method', SHADOW_METHODS, 'latest');
}

/** `shadow_x`, `shadow_x[class]` (forms) and `shadow_x: {class: …}` (JSON): every value checked. */
function checkPerType(fields: RawFields, name: string, check: (text: string) => void): void {
  const whole = fields.get(name);
  if (whole !== null && typeof whole === 'object' && !Array.isArray(whole) && !isFilePart(whole)) {
    for (const [cls, value] of Object.entries(whole)) {
      checkClass(name, cls);
      const text = readText(new Map([[name, value as RawValue]]), name);
      if (text !== undefined) check(text);
    }
  } else {
    const text = readText(fields, name);
    if (text !== undefined) check(text);
  }
  const prefix = `${name}[`;
  for (const key of fields.keys()) {
    if (!key.startsWith(prefix) || !key.endsWith(']')) continue;
    checkClass(name, key.slice(prefix.length, -1));
    const text = readText(fields, key);
    if (text !== undefined) check(text);
  }
}

function checkClass(name: string, cls: string): void {
  if (!FOREGROUND_CLASSES.has(cls.toLowerCase())) throw invalidParameter(name, `a foreground class (${[...FOREGROUND_CLASSES].join(', ')})`, cls);
}
