// `npm run model -- --from FILE --int8`: a user's own fp32 (or fp16) model file quantised to int8 for
// the CPU, with the same calibration and quantisation as the bundled isnet-int8 (calibration-run.ts,
// quantize.ts), fed as the file's family feeds it. An fp16 file is widened to fp32 first, as the
// bundled isnet-fp32 is made (onnx-transform.ts widenFp16): its int8 file takes and gives float32.
// The result is checked against the family as `serve --model-file` would check it, and written
// beside its calibration table (and descriptor).
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from './assemble.js';
import { calibrationInput, CALIBRATION_DESCRIPTION, defaultCalibrationPhotos, measureRanges, type CalibrationInput } from './calibration-run.js';
import { checkModelFile, ModelFileError, sessionOptionsForFile, type ModelFile } from './families.js';
import type { ModelFamily } from '../domain/model-family.js';
import { decodeModel, encodeModel, widenFp16 } from './onnx-transform.js';
import { quantizeInt8, type CalibrationTable, type QuantizeStats } from './quantize.js';

export interface QuantizeFileRequest {
  file: string;
  family?: ModelFamily | undefined;
  descriptor?: string | undefined;
  /** Where the int8 file goes; default: FILE without `.onnx`, plus `.int8.onnx`. */
  out?: string | undefined;
  /** Photos to calibrate on (files); default: the 35 Debian photos of `npm run model:calibrate`. */
  photos?: string[] | undefined;
  progress?: (text: string) => void;
}

export interface QuantizedFile {
  out: string;
  sha256: string;
  family: ModelFamily;
  /** The calibration table written beside it (`<out>.calibration.json`). */
  table: string;
  /** The descriptor copied beside it (`<out>.json`), when the source had one. */
  descriptor?: string;
  /** fp16 tensors and casts widened to fp32 before calibration (zero for an fp32 file). */
  widened: { tensors: number; casts: number };
  stats: QuantizeStats;
  photos: number;
  tensors: number;
}

/** The default output: `model.onnx` → `model.int8.onnx`. */
export function int8PathFor(file: string): string {
  return `${file.replace(/\.onnx$/i, '')}.int8.onnx`;
}

/** Image files (JPEG, PNG, WebP) directly in `dir`, sorted. */
export function photosIn(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    throw new ModelFileError(`Could not read the calibration photos folder ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const photos = names
    .filter((n) => /\.(jpe?g|png|webp)$/i.test(n))
    .sort()
    .map((n) => path.join(dir, n));
  if (photos.length === 0) throw new ModelFileError(`The calibration photos folder ${dir} has no .jpg, .png or .webp files`);
  return photos;
}

/** The file's input as the service feeds it (sessionOptionsForFile: mean and std in 0..255 units). */
function calibrationInputOf(m: ModelFile): CalibrationInput {
  const { inputName, width, height, mean, std, layout } = sessionOptionsForFile(m, 1);
  return { name: inputName, width, height, mean, std, ...(layout ? { layout } : {}) };
}

/**
 * The file as fp32: an fp16 one (weights, casts or float16 ends) widened, the float32 file as it is.
 * Calibration runs it on ONNX Runtime's CPU provider and quantisation reads float32 weights.
 */
function float32Bytes(bytes: Uint8Array, m: ModelFile): { bytes: Uint8Array; widened: { tensors: number; casts: number } } {
  const model = decodeModel(bytes);
  const widened = widenFp16(model);
  const halfEnds = m.inputType === 'float16' || m.outputType === 'float16';
  if (widened.tensors + widened.casts === 0 && !halfEnds) return { bytes, widened };
  return { bytes: encodeModel(model), widened };
}

export async function quantizeModelFile(req: QuantizeFileRequest): Promise<QuantizedFile> {
  const progress = req.progress ?? (() => {});
  const source = checkModelFile({ file: req.file, family: req.family, descriptor: req.descriptor });
  const out = path.resolve(req.out ?? int8PathFor(req.file));
  if (out === source.path) throw new ModelFileError(`--out ${req.out} is the model file itself: give another path`);
  const photos = req.photos ?? defaultCalibrationPhotos();
  const { bytes, widened } = float32Bytes(fs.readFileSync(source.path), source);
  const input = calibrationInputOf(source);
  if (widened.tensors + widened.casts > 0) progress(`widened to fp32 first: ${widened.tensors} fp16 tensors, ${widened.casts} casts`);
  progress(`calibrating on ${photos.length} photos at ${input.width}x${input.height}`);
  const inputs = await Promise.all(
    photos.map((p) =>
      calibrationInput(p, input).catch((err: Error) => {
        throw new ModelFileError(`The calibration photo ${p} could not be read: ${err.message}`);
      }),
    ),
  );
  const ranges = await measureRanges(bytes, input, inputs, progress);
  const table: CalibrationTable & { model: string; photos: string[] } = {
    description: CALIBRATION_DESCRIPTION,
    model: `${path.basename(source.path)} (sha256 ${source.sha256})`,
    photos: photos.map((p) => path.basename(p)),
    float: [],
    ranges,
  };
  const model = decodeModel(bytes);
  let stats: QuantizeStats;
  try {
    stats = quantizeInt8(model, table);
  } catch (err) {
    throw new ModelFileError(`The model file ${req.file} could not be quantised (--int8 needs float32 weights and activations): ${(err as Error).message}`);
  }
  if (stats.convs === 0) throw new ModelFileError(`The model file ${req.file} has no convolutions to quantise: --int8 would change nothing`);
  const quantized = encodeModel(model);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, quantized);
  const tableFile = `${out.replace(/\.onnx$/i, '')}.calibration.json`;
  fs.writeFileSync(tableFile, `${JSON.stringify(table, null, 1)}\n`);
  // The int8 file is fed and read as its source was: the same descriptor beside it.
  let descriptor: string | undefined;
  if (source.descriptor) {
    descriptor = `${out}.json`;
    fs.copyFileSync(source.descriptor, descriptor);
  }
  // What `serve --model-file OUT` will check: refused here rather than at its start.
  checkModelFile({ file: out, family: source.family, ...(descriptor ? { descriptor } : {}) });
  return {
    out,
    sha256: sha256(quantized),
    family: source.family,
    table: tableFile,
    ...(descriptor ? { descriptor } : {}),
    widened,
    stats,
    photos: photos.length,
    tensors: Object.keys(ranges).length,
  };
}
