// The start's warnings about a model file of the user's own (families.ts familyWarnings), for
// `cutout serve` and `cutout remove`. It still runs: the signs are strong, not proof, and a
// descriptor may say otherwise on purpose.
import type { RemovalPool } from '../pool/pool-api.js';

/** `cutout serve: warning: model m.onnx does not look like a birefnet file: …`, one line per sign. */
export function describeModelWarnings(pool: RemovalPool, command: string): string[] {
  const i = pool.info;
  if (!i?.modelWarnings) return [];
  return i.modelWarnings.map((w) => `${command}: warning: model ${i.model} does not look like a ${i.modelFamily ?? 'model'} file: ${w}`);
}
