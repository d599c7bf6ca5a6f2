// IEEE 754 half → single precision, for widening fp16 weights offline.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function halfToFloat(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exp = (h >> 10) & 0x1f;
  let mant = h & 0x3ff;
  if (exp === 0) {
    if (mant === 0) {
      u32[0] = sign;
      return f32[0]!;
    }
    // Subnormal half: normalise into a float exponent.
    let e = -1;
    do {
      e++;
      mant <<= 1;
    } while ((mant & 0x400) === 0);
    u32[0] = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    return f32[0]!;
  }
  if (exp === 0x1f) {
    u32[0] = sign | 0x7f800000 | (mant << 13);
    return f32[0]!;
  }
  u32[0] = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  return f32[0]!;
}

/** Widen little-endian fp16 bytes to fp32 bytes. */
export function widenHalfBytes(raw: Uint8Array): Uint8Array {
  const n = raw.byteLength >> 1;
  const out = new Float32Array(n);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let i = 0; i < n; i++) out[i] = halfToFloat(view.getUint16(i * 2, true));
  return new Uint8Array(out.buffer);
}
