// Reading add_shadow, shadow_type and shadow_opacity as a request gives them: plain, `shadow_x[class]`
// (forms) or `shadow_x: {class: …}` (JSON), every value and class checked with remove.bg's
// per-parameter 400. api/params/shadow.ts resolves what they mean. Pure.

import { isFilePart, type RawFields, type RawValue } from '../../http/fields.js';
import { invalidParameter } from '../errors.js';
import { readBoolean, readText } from './fields.js';
import type { ForegroundClass, PerClass, ShadowFields, ShadowOpacityValue, ShadowTypeValue } from './shadow.js';

const SHADOW_TYPES = { car: 'car', '3d': '3D', drop: 'drop', none: 'none', auto: 'auto' } as const;
/**
 * Classes a per-class value may name (`shadow_type[car]=…`) → the request class it applies to.
 * `car_interior` and `car_part` are classes only remove.bg's classifier reports; no `type` names them,
 * so their values are checked and never apply.
 */
const FOREGROUND_CLASSES: Readonly<Record<string, ForegroundClass | null>> = {
  person: 'person',
  product: 'product',
  animal: 'animal',
  car: 'car',
  car_interior: null,
  car_part: null,
  transportation: 'transportation',
  graphic: 'graphic',
  graphics: 'graphic',
  other: 'other',
};

export function readShadowFields(fields: RawFields): ShadowFields {
  const addShadow = readBoolean(fields, 'add_shadow', false);
  const type = readPerClass<ShadowTypeValue>(fields, 'shadow_type', (text) => {
    const hit = SHADOW_TYPES[text.toLowerCase() as keyof typeof SHADOW_TYPES];
    if (hit === undefined) throw invalidParameter('shadow_type', `one of ${Object.values(SHADOW_TYPES).join(', ')}`, text);
    return hit;
  });
  const opacity = readPerClass<ShadowOpacityValue>(fields, 'shadow_opacity', (text) => {
    if (text.toLowerCase() === 'auto') return 'auto';
    const n = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(n >= 0 && n <= 100)) throw invalidParameter('shadow_opacity', "an integer from 0 to 100 or 'auto'", text);
    return n;
  });
  return { addShadow, type, opacity };
}

/** `name`, `name[class]` (forms) and `name: {class: …}` (JSON), each value through `parse`. */
function readPerClass<T>(fields: RawFields, name: string, parse: (text: string) => T): PerClass<T> {
  const out: PerClass<T> = { byClass: {} };
  const perClass = (cls: string, text: string | undefined) => {
    const target = classOf(name, cls);
    if (text === undefined) return;
    const value = parse(text);
    if (target !== null) out.byClass[target] = value;
  };
  const whole = fields.get(name);
  if (whole !== null && typeof whole === 'object' && !Array.isArray(whole) && !isFilePart(whole)) {
    for (const [cls, value] of Object.entries(whole)) perClass(cls, readText(new Map([[name, value as RawValue]]), name));
  } else {
    const text = readText(fields, name);
    if (text !== undefined) out.all = parse(text);
  }
  const prefix = `${name}[`;
  for (const key of fields.keys()) {
    if (key.startsWith(prefix) && key.endsWith(']')) perClass(key.slice(prefix.length, -1), readText(fields, key));
  }
  return out;
}

function classOf(name: string, cls: string): ForegroundClass | null {
  const hit = FOREGROUND_CLASSES[cls.toLowerCase()];
  if (hit === undefined) throw invalidParameter(name, `a foreground class (${Object.keys(FOREGROUND_CLASSES).join(', ')})`, cls);
  return hit;
}
