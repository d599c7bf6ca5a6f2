// `--shadow none|drop|3D|car [--shadow-opacity N]` → RemoveOptions.shadow, as the HTTP API resolves
// shadow_type and shadow_opacity: opacity 0 or `none` is no shadow; without --shadow-opacity the
// opacity is remove.bg's `auto` for a subject of the kind's own class (car 90, drop and 3D 50).

import { parseShadowType, SHADOW_TYPES, type ShadowOptions } from '../domain/removal.js';

export const SHADOW_FLAGS = ['shadow', 'shadow-opacity'] as const;

/** The shadow the flags ask for (undefined: none), or a usage error's message. */
export function parseShadowFlags(flags: ReadonlyMap<string, string | true>): { shadow?: ShadowOptions } | { error: string } {
  const kindFlag = flags.get('shadow');
  const opacityFlag = flags.get('shadow-opacity');
  if (kindFlag === undefined) return opacityFlag === undefined ? {} : { error: '--shadow-opacity needs --shadow' };
  const kinds = `none, ${SHADOW_TYPES.join(', ')}`;
  if (kindFlag === true) return { error: `--shadow needs a kind: ${kinds}` };
  const type = parseShadowType(kindFlag);
  if (!type && kindFlag.toLowerCase() !== 'none') return { error: `unknown --shadow '${kindFlag}' (expected ${kinds})` };
  const opacity = opacityFlag === undefined ? (type === 'car' ? 90 : 50) : /^\d+$/.test(String(opacityFlag)) ? Number(opacityFlag) : NaN;
  if (!(opacity >= 0 && opacity <= 100)) return { error: '--shadow-opacity expects an integer from 0 to 100' };
  return type && opacity > 0 ? { shadow: { type, opacity } } : {};
}
