// Fusing several mattes of one photo (test-time augmentation, several input sizes) into one, on the
// largest matte's grid. The first matte is the reference view (1024², as shipped).

export type Fusion = 'mean' | 'confidence' | 'edges';
export const FUSIONS: readonly Fusion[] = ['confidence', 'mean', 'edges'];

export interface SquareMatte {
  data: Float32Array;
  size: number;
}

/** Centre-aligned bilinear resampling of a square matte to `size`². */
export function resampleSquare(m: SquareMatte, size: number): Float32Array {
  if (m.size === size) return m.data;
  const out = new Float32Array(size * size);
  const scale = m.size / size;
  const taps = (d: number): [number, number, number] => {
    let s = (d + 0.5) * scale - 0.5;
    s = Math.min(Math.max(s, 0), m.size - 1);
    const i = Math.min(Math.floor(s), Math.max(m.size - 2, 0));
    return [i, Math.min(i + 1, m.size - 1), s - i];
  };
  const t = Array.from({ length: size }, (_, d) => taps(d));
  for (let y = 0; y < size; y++) {
    const [y0, y1, fy] = t[y]!;
    for (let x = 0; x < size; x++) {
      const [x0, x1, fx] = t[x]!;
      const a = m.data[y0 * m.size + x0]! * (1 - fx) + m.data[y0 * m.size + x1]! * fx;
      const b = m.data[y1 * m.size + x0]! * (1 - fx) + m.data[y1 * m.size + x1]! * fx;
      out[y * size + x] = a * (1 - fy) + b * fy;
    }
  }
  return out;
}

/**
 * - `mean`: the average (flip TTA);
 * - `confidence`: each matte weighted by its own confidence |2a − 1| at the pixel;
 * - `edges`: the reference matte, except where it is uncertain (band < a < 1 − band): there the
 *   mean of the others (the larger input's edges).
 */
export function fuseMattes(mattes: readonly SquareMatte[], fusion: Fusion, band = 0.1): SquareMatte {
  const size = Math.max(...mattes.map((m) => m.size));
  const planes = mattes.map((m) => resampleSquare(m, size));
  const out = new Float32Array(size * size);
  const n = planes.length;
  for (let i = 0; i < out.length; i++) {
    if (fusion === 'mean') {
      let s = 0;
      for (const p of planes) s += p[i]!;
      out[i] = s / n;
    } else if (fusion === 'confidence') {
      let s = 0;
      let w = 0;
      for (const p of planes) {
        const a = p[i]!;
        const c = Math.abs(2 * a - 1) + 1e-3;
        s += c * a;
        w += c;
      }
      out[i] = s / w;
    } else {
      const a0 = planes[0]![i]!;
      if (a0 > band && a0 < 1 - band && n > 1) {
        let s = 0;
        for (let k = 1; k < n; k++) s += planes[k]![i]!;
        out[i] = s / (n - 1);
      } else {
        out[i] = a0;
      }
    }
  }
  return { data: out, size };
}
