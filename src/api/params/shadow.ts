// remove.bg's shadow fields → the one shadow a request draws, or none (REMOVEBG-API.md §1; docs/http.md,
// "Shadows"). `add_shadow`, `shadow_type` and `shadow_opacity`, each given for every class, per class,
// or both, resolved against the request's foreground class. cutout does not classify, so the class is
// the request's `type`, and `type=auto` is `other`. Pure.

import type { ShadowOptions, ShadowType } from '../../domain/removal.js';

/** The classes a request can be of, as remove.bg's shadow tables name them. */
export type ForegroundClass = 'person' | 'product' | 'car' | 'animal' | 'transportation' | 'graphic' | 'other';

export type ShadowTypeValue = ShadowType | 'none' | 'auto';
export type ShadowOpacityValue = number | 'auto';

/** One field as given: a value for every class (`all`), values per class (`byClass`), or both. */
export interface PerClass<T> {
  all?: T;
  byClass: Partial<Record<ForegroundClass, T>>;
}

/** The shadow fields of a request, validated, not yet resolved. */
export interface ShadowFields {
  /** Deprecated upstream: `true` means `shadow_type[car]=car`. */
  addShadow: boolean;
  type: PerClass<ShadowTypeValue>;
  opacity: PerClass<ShadowOpacityValue>;
}

/** remove.bg's `shadow_type=auto`, per class. */
export const AUTO_SHADOW_TYPE: Readonly<Record<ForegroundClass, ShadowType>> = Object.freeze({
  car: 'car',
  product: 'drop',
  person: '3D',
  animal: 'drop',
  transportation: '3D',
  graphic: 'drop',
  other: 'drop',
});

/** remove.bg's `shadow_opacity=auto`: 90 for a car, 50 for every other class. */
export const autoShadowOpacity = (cls: ForegroundClass): number => (cls === 'car' ? 90 : 50);

/** The class a request's `type` names: `auto` is `other`, since nothing here classifies the photo. */
export const foregroundClass = (type: string): ForegroundClass => (type === 'auto' ? 'other' : (type as ForegroundClass));

/**
 * The shadow a request of class `cls` draws; undefined for none (no field, `none`, opacity 0).
 * A value for the class wins over the value for every class, which applies to the classes given none
 * of their own; with per-class values only, a class without one gets no shadow. `add_shadow=true`
 * stands for `shadow_type[car]=car`, so an explicit `shadow_type[car]` wins over it.
 */
export function resolveShadow(fields: ShadowFields, cls: ForegroundClass): ShadowOptions | undefined {
  const implied: ShadowTypeValue | undefined = fields.addShadow && cls === 'car' ? 'car' : undefined;
  const typeValue = fields.type.byClass[cls] ?? implied ?? fields.type.all ?? 'none';
  if (typeValue === 'none') return undefined;
  const opacityValue = fields.opacity.byClass[cls] ?? fields.opacity.all ?? 'auto';
  const opacity = opacityValue === 'auto' ? autoShadowOpacity(cls) : opacityValue;
  if (opacity === 0) return undefined;
  return { type: typeValue === 'auto' ? AUTO_SHADOW_TYPE[cls] : typeValue, opacity };
}
