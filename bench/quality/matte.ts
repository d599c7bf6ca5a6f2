// A single-channel image of floats (alpha matte, mask or trimap), row-major, values normally in [0,1].

export interface Matte {
  readonly width: number;
  readonly height: number;
  readonly data: Float32Array;
}

export function makeMatte(width: number, height: number, values?: ArrayLike<number>): Matte {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new RangeError(`bad matte size ${width}x${height}`);
  }
  const data = new Float32Array(width * height);
  if (values !== undefined) {
    if (values.length !== data.length) {
      throw new RangeError(`expected ${data.length} values, got ${values.length}`);
    }
    data.set(values);
  }
  return { width, height, data };
}

/** Builds a matte from rows of numbers (handy in tests): fromRows([[0, 1], [1, 0]]). */
export function fromRows(rows: readonly (readonly number[])[]): Matte {
  const height = rows.length;
  const width = rows[0]?.length ?? 0;
  const flat: number[] = [];
  for (const row of rows) {
    if (row.length !== width) throw new RangeError('ragged rows');
    flat.push(...row);
  }
  return makeMatte(width, height, flat);
}

/** One 8-bit channel of an interleaved buffer → matte in [0,1]. */
export function matteFromBytes(bytes: Uint8Array, width: number, height: number, channels: number, channel: number): Matte {
  const n = width * height;
  if (bytes.length < n * channels) throw new RangeError('buffer too small');
  const data = new Float32Array(n);
  for (let i = 0, j = channel; i < n; i++, j += channels) data[i] = (bytes[j] as number) / 255;
  return { width, height, data };
}

export function assertSameSize(a: Matte, b: Matte, what = 'mattes'): void {
  if (a.width !== b.width || a.height !== b.height) {
    throw new RangeError(`${what} differ in size: ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  }
}

/** Pixel-selection mask (1 = counted). `undefined` means the whole image. */
export type Region = Uint8Array | undefined;

/** Unknown region of a trimap (values in [0,1]; 0 = bg, 1 = fg, anything strictly between = unknown, i.e. 128/255). */
export function unknownRegion(trimap: Matte): Uint8Array {
  const out = new Uint8Array(trimap.data.length);
  for (let i = 0; i < out.length; i++) {
    const v = trimap.data[i] as number;
    out[i] = v > 0 && v < 1 ? 1 : 0;
  }
  return out;
}

export function regionSize(region: Region, n: number): number {
  if (region === undefined) return n;
  let c = 0;
  for (let i = 0; i < region.length; i++) c += region[i] as number;
  return c;
}
