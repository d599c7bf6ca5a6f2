// What each quality level runs (docs/quality.md, "Quality levels"; chosen by the cross-validated
// measurements there). A level bounds the work: the refine/matting/decontaminate switches can still
// turn a stage off, never on.
import type { QualityLevel, RemoveOptions } from '../domain/removal.js';

export interface QualityPlan {
  /** Run the model on the mirrored photo too and let it decide where the first matte is unsure (test-time augmentation). */
  flip: boolean;
  refine: boolean;
  matting: boolean;
  decontaminate: boolean;
}

/**
 * The CPU path. `balanced` is today's default pipeline (within 1.2× of its time per photo);
 * `fast` skips the edge stages; `best` adds the mirrored inference (about 2× the inference time).
 * Measured in docs/quality.md: `best` raises DAVIS IoU and lowers whole-image error, at a cost in the
 * alphamatting edge band (plants).
 * The staged (GPU) path runs the same composite stages; its batches do not run the mirrored photo
 * yet, so there `best` is `balanced` until that is built and measured (docs/quality.md).
 */
export function qualityPlan(level: QualityLevel, options: Pick<RemoveOptions, 'refine' | 'matting' | 'decontaminate'>): QualityPlan {
  const stages = level !== 'fast';
  return {
    flip: level === 'best',
    refine: stages && options.refine,
    matting: stages && options.refine && options.matting,
    decontaminate: stages && options.decontaminate,
  };
}

/**
 * Where the model's matte is unsure (strictly between MIRROR_BAND and 1 − MIRROR_BAND), take the
 * mirrored photo's matte (`mirrored`, as the model returned it) instead; elsewhere keep it. In place.
 * Chosen in cross-validation over the plain mean and a confidence-weighted mean (docs/quality.md):
 * every fold picked it.
 */
export function fuseMirrored(matte: Float32Array, mirrored: Float32Array, width: number, height: number): void {
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const a = matte[row + x]!;
      if (a > MIRROR_BAND && a < 1 - MIRROR_BAND) matte[row + x] = mirrored[row + width - 1 - x]!;
    }
  }
}

/** The band of fuseMirrored (the cross-validated fusion's, bench/matte-fusion.ts `edges`). */
export const MIRROR_BAND = 0.1;

/** Mirror RGB rows (3 bytes a pixel) left to right, in place. */
export function mirrorRgb(data: Uint8Array, width: number, height: number): void {
  for (let y = 0; y < height; y++) {
    let a = y * width * 3;
    let b = a + (width - 1) * 3;
    for (; a < b; a += 3, b -= 3) {
      for (let c = 0; c < 3; c++) {
        const t = data[a + c]!;
        data[a + c] = data[b + c]!;
        data[b + c] = t;
      }
    }
  }
}
