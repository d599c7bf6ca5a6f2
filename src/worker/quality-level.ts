// What each quality level runs (docs/quality.md, "Quality levels"; chosen by the cross-validated
// measurements there). A level bounds the work: the refine/matting/decontaminate switches can still
// turn a stage off, never on.
import type { QualityLevel, RemoveOptions } from '../domain/removal.js';

export interface QualityPlan {
  /** Run the model on the mirrored photo too and average the two mattes (test-time augmentation). */
  flip: boolean;
  refine: boolean;
  matting: boolean;
  decontaminate: boolean;
}

/**
 * The CPU path. `balanced` is today's default pipeline (within 1.2× of its time per photo);
 * `fast` skips the edge stages; `best` adds the mirrored inference (about 2× the inference time).
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

/** Average the model's matte with the mirrored photo's (`mirrored`, as the model returned it), in place. */
export function averageMirrored(matte: Float32Array, mirrored: Float32Array, width: number, height: number): void {
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) matte[row + x] = (matte[row + x]! + mirrored[row + width - 1 - x]!) / 2;
  }
}

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
