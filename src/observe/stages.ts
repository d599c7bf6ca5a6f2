// The worker's stage timings (Server-Timing's names: probe, decode, decodeOutput, infer, composite,
// layout, background, encode, queue) grouped into the stages operators watch: queue, decode,
// inference, composite, encode. One table, shared by the metrics and the request log.

export const STAGES = ['queue', 'decode', 'inference', 'composite', 'encode'] as const;
export type Stage = (typeof STAGES)[number];

const STAGE_OF: Readonly<Record<string, Stage>> = Object.freeze({
  queue: 'queue',
  probe: 'decode',
  decode: 'decode',
  decodeOutput: 'decode',
  infer: 'inference',
  composite: 'composite',
  layout: 'composite',
  background: 'composite',
  encode: 'encode',
});

/** Milliseconds per stage (0.1 ms), only the stages the timings name; waits and totals are left out. */
export function stageMs(timings: Readonly<Record<string, number>> | undefined): Partial<Record<Stage, number>> {
  const out: Partial<Record<Stage, number>> = {};
  if (!timings) return out;
  for (const name in timings) {
    const stage = Object.hasOwn(STAGE_OF, name) ? STAGE_OF[name] : undefined;
    const ms = timings[name]!;
    if (stage === undefined || !Number.isFinite(ms)) continue;
    out[stage] = Math.round(((out[stage] ?? 0) + ms) * 10) / 10;
  }
  return out;
}
