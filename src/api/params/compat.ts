// Fields remove.bg clients send beside the image: type, type_level, semitransparency, the shadow fields
// and shadow_method (removed upstream 2021-04-13). Each is validated, so a bad value gets remove.bg's
// per-parameter 400. cutout has no classifier, so `type` acts only as the class the shadow fields are
// resolved for (api/params/shadow.ts); type_level, semitransparency and shadow_method are dropped. Pure.

import type { ShadowOptions } from '../../domain/removal.js';
import type { RawFields } from '../../http/fields.js';
import { readBoolean, readEnum } from './fields.js';
import { foregroundClass, resolveShadow } from './shadow.js';
import { readShadowFields } from './shadow-fields.js';

const TYPES = {
  auto: 'auto',
  person: 'person',
  product: 'product',
  car: 'car',
  animal: 'animal',
  graphic: 'graphic',
  transportation: 'transportation',
} as const;
const TYPE_LEVELS = { none: 'none', '1': '1', '2': '2', latest: 'latest' } as const;
const SHADOW_METHODS = { legacy: 'legacy', latest: 'latest' } as const;

/** Throws remove.bg's 400 for a bad value of any of these fields; returns the shadow to draw, if any. */
export function readCompatFields(fields: RawFields): ShadowOptions | undefined {
  const type = readEnum(fields, 'type', TYPES, 'auto');
  readEnum(fields, 'type_level', TYPE_LEVELS, '1');
  readBoolean(fields, 'semitransparency', true);
  const shadowFields = readShadowFields(fields);
  readEnum(fields, 'shadow_method', SHADOW_METHODS, 'latest');
  return resolveShadow(shadowFields, foregroundClass(type));
}
