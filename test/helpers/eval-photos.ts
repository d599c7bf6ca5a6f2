// The research photos (eval/dev): licensed for internal evaluation only, so they are read in place and
// never copied into the repository. A clone without them runs everything else; the checks that need
// them skip, with one reason that names the folder looked in and the variable that sets it.
import fs from 'node:fs';
import path from 'node:path';
import { evalDir } from '../../bench/quality/eval-dir.js';

/** $CUTOUT_EVAL_DIR, else ../shared/eval/dev beside the checkout (bench/quality/eval-dir.ts). */
export const EVAL_DIR = evalDir();

/**
 * tap's skip reason for a check that needs the research photos, or false when they are here: pass it
 * as `t.test(name, { skip: EVAL_SKIP }, fn)`, so the skip shows in tap's summary.
 */
export const EVAL_SKIP: string | false = fs.existsSync(path.join(EVAL_DIR, 'manifest.csv'))
  ? false
  : `research photos not found at ${EVAL_DIR}: set CUTOUT_EVAL_DIR to the eval/dev folder to run this`;
