// How far two byte images are apart, for tests that hold the addon's float results against a
// double-precision reference: the largest difference and the share of bytes within one level.

export interface ByteDiff {
  /** Bytes compared. */
  n: number;
  max: number;
  /** Bytes that differ by more than one level. */
  overOne: number;
  /** Bytes that differ at all. */
  differ: number;
}

/** Compares the bytes where `take(i)` holds (all of them when absent). */
export function byteDiff(got: Uint8Array, want: Uint8Array, take?: (i: number) => boolean): ByteDiff {
  const d: ByteDiff = { n: 0, max: 0, overOne: 0, differ: 0 };
  for (let i = 0; i < got.length; i++) {
    if (take && !take(i)) continue;
    const e = Math.abs(got[i]! - want[i]!);
    d.n++;
    if (e > d.max) d.max = e;
    if (e > 1) d.overOne++;
    if (e > 0) d.differ++;
  }
  return d;
}

export const describeDiff = (d: ByteDiff): string =>
  `${d.n} bytes: ${d.differ} differ, ${d.overOne} by more than 1 (${((100 * d.overOne) / Math.max(1, d.n)).toFixed(4)}%), max ${d.max}`;
