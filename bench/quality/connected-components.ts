// Largest 4-connected component of a binary image (MATLAB bwconncomp(·, 4), as in the
// reference connectivity-error code).

/** Returns a 0/1 mask of the largest 4-connected component of `bin` (all zeros if `bin` is empty). */
export function largestComponent(bin: Uint8Array, width: number, height: number): Uint8Array {
  const n = width * height;
  const label = new Int32Array(n);
  const stack = new Int32Array(n);
  let best = 0;
  let bestSize = 0;
  let next = 0;
  for (let start = 0; start < n; start++) {
    if (bin[start] === 0 || label[start] !== 0) continue;
    next++;
    let size = 0;
    let sp = 0;
    stack[sp++] = start;
    label[start] = next;
    while (sp > 0) {
      const p = stack[--sp] as number;
      size++;
      const x = p % width;
      const y = (p - x) / width;
      if (x > 0 && bin[p - 1] !== 0 && label[p - 1] === 0) {
        label[p - 1] = next;
        stack[sp++] = p - 1;
      }
      if (x < width - 1 && bin[p + 1] !== 0 && label[p + 1] === 0) {
        label[p + 1] = next;
        stack[sp++] = p + 1;
      }
      if (y > 0 && bin[p - width] !== 0 && label[p - width] === 0) {
        label[p - width] = next;
        stack[sp++] = p - width;
      }
      if (y < height - 1 && bin[p + width] !== 0 && label[p + width] === 0) {
        label[p + width] = next;
        stack[sp++] = p + width;
      }
    }
    if (size > bestSize) {
      bestSize = size;
      best = next;
    }
  }
  const out = new Uint8Array(n);
  if (best !== 0) for (let i = 0; i < n; i++) out[i] = label[i] === best ? 1 : 0;
  return out;
}
