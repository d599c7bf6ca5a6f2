// Synthetic photos with a known matte, and network-like mattes for them, for the native matting tests.

export interface MattingScene {
  width: number;
  height: number;
  /** RGBA, alpha 255 (composite overwrites it). */
  photo: Uint8Array;
  /** Ground-truth coverage per pixel, 0..1; absent for scenes without one. */
  truth?: Float64Array;
}

const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));

export const SUBJECT = [220, 40, 30] as const;
export const BACKDROP = [30, 70, 210] as const;

/** The two-colour scene: a red disc (radius 48 px, centre (96, 80)) on blue, its rim a 10 px linear
 * coverage ramp like fur. Every pixel is exactly coverage·red + (1 − coverage)·blue, rounded. */
export const DISC = { width: 192, height: 160, cx: 96, cy: 80, radius: 48, ramp: 10 } as const;

export function discScene(): MattingScene {
  const { width, height, cx, cy, radius, ramp } = DISC;
  const truth = new Float64Array(width * height);
  const photo = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const a = clamp01((radius - Math.hypot(x + 0.5 - cx, y + 0.5 - cy)) / ramp + 0.5);
      const i = y * width + x;
      truth[i] = a;
      for (let c = 0; c < 3; c++) photo[i * 4 + c] = Math.round(a * SUBJECT[c]! + (1 - a) * BACKDROP[c]!);
      photo[i * 4 + 3] = 255;
    }
  }
  return { width, height, photo, truth };
}

/** What a low-resolution network gives for the disc: the edge 4 px too far out and a 30 px ramp (3× too soft). */
export function discMask(mw: number, mh: number): Float32Array {
  const { width, height, cx, cy, radius } = DISC;
  const mask = new Float32Array(mw * mh);
  for (let j = 0; j < mh; j++) {
    for (let i = 0; i < mw; i++) {
      const d = Math.hypot(((i + 0.5) * width) / mw - cx, ((j + 0.5) * height) / mh - cy);
      mask[j * mw + i] = clamp01((radius + 4 - d) / 30 + 0.5);
    }
  }
  return mask;
}

/** Deterministic 32-bit LCG in [0, 1). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A busy photo larger than the 1024² matte grid (cells of ~1.25 px): smooth colour waves plus noise. */
export function noiseScene(width = 1280, height = 1100, seed = 7): MattingScene {
  const rnd = lcg(seed);
  const photo = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      photo[i] = Math.round(clamp01(0.5 + 0.4 * Math.sin(x / 37) + 0.2 * (rnd() - 0.5)) * 255);
      photo[i + 1] = Math.round(clamp01(0.5 + 0.4 * Math.cos(y / 23) + 0.2 * (rnd() - 0.5)) * 255);
      photo[i + 2] = Math.round(clamp01(0.5 + 0.4 * Math.sin((x + y) / 51) + 0.2 * (rnd() - 0.5)) * 255);
      photo[i + 3] = 255;
    }
  }
  return { width, height, photo };
}

/** A blotchy matte with plenty of soft values, sure regions and hard steps. */
export function noiseMask(mw: number, mh: number, seed = 11): Float32Array {
  const rnd = lcg(seed);
  const mask = new Float32Array(mw * mh);
  for (let j = 0; j < mh; j++) {
    for (let i = 0; i < mw; i++) {
      const v = 0.5 + 0.9 * Math.sin(i / 41) * Math.cos(j / 29) + 0.15 * (rnd() - 0.5);
      mask[j * mw + i] = (i >> 7) % 3 === 0 ? (v > 0.5 ? 1 : 0) : clamp01(v);
    }
  }
  return mask;
}
