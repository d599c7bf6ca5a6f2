// Rebuilds an ONNX model from an npm package's chunk files, verifies it, and applies the manifest's transforms.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { decodeModel, dynamicBatch, encodeModel, inputSize, keepOutputs, pixelInput, widenFp16 } from './onnx-transform.js';
import { MODELS_DIR, PACKAGE_ROOT, type ModelEntry } from './manifest.js';
import { quantizeInt8, type CalibrationTable } from './quantize.js';

export class ModelError extends Error {
  constructor(
    readonly code: 'model_missing' | 'model_corrupt' | 'model_source_missing',
    message: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

interface ResourceChunk {
  hash: string;
  offsets: [number, number];
}

export function sha256(bytes: Uint8Array): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

function packageDir(pkg: string): string {
  const require = createRequire(path.join(PACKAGE_ROOT, 'package.json'));
  try {
    return path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    // Packages whose exports hide package.json: walk node_modules directly.
    const dir = path.join(PACKAGE_ROOT, 'node_modules', pkg);
    if (fs.existsSync(dir)) return dir;
    throw new ModelError('model_source_missing', `Model source package '${pkg}' is not installed; run npm install`);
  }
}

/** Concatenate the source chunks in offset order and check size and sha256. */
export function readSourceModel(entry: ModelEntry): Uint8Array {
  const src = entry.source;
  const dir = packageDir(src.package);
  const resourcesPath = path.join(dir, src.resources);
  const resources = JSON.parse(fs.readFileSync(resourcesPath, 'utf8')) as Record<string, { chunks: ResourceChunk[]; size: number }>;
  const res = resources[src.key];
  if (!res) throw new ModelError('model_source_missing', `${resourcesPath} has no entry '${src.key}'`);
  const out = new Uint8Array(src.bytes);
  let filled = 0;
  for (const chunk of [...res.chunks].sort((a, b) => a.offsets[0] - b.offsets[0])) {
    const file = path.join(path.dirname(resourcesPath), chunk.hash);
    if (!fs.existsSync(file)) throw new ModelError('model_source_missing', `Model chunk missing: ${file}`);
    const bytes = fs.readFileSync(file);
    const [start, end] = chunk.offsets;
    if (bytes.byteLength !== end - start || end > out.byteLength) {
      throw new ModelError('model_corrupt', `Model chunk ${file} has ${bytes.byteLength} bytes, expected ${end - start}`);
    }
    out.set(bytes, start);
    filled += bytes.byteLength;
  }
  if (filled !== src.bytes) throw new ModelError('model_corrupt', `Chunks of ${src.key} add up to ${filled} bytes, expected ${src.bytes}`);
  const digest = sha256(out);
  if (digest !== src.sha256) {
    throw new ModelError('model_corrupt', `Model ${src.key} from ${src.package} has sha256 ${digest}, expected ${src.sha256}`);
  }
  return out;
}

export function applyTransforms(bytes: Uint8Array, transforms: string[], input?: ModelEntry['input']): Uint8Array {
  if (transforms.length === 0) return bytes;
  const model = decodeModel(bytes);
  for (const t of transforms) {
    if (t === 'fp16-to-fp32') widenFp16(model);
    else if (t === 'dynamic-batch') dynamicBatch(model);
    else if (t === 'u8-nhwc-input') {
      if (!input) throw new Error(`Transform '${t}' needs the model's input description`);
      pixelInput(model, { name: input.name, mean: input.mean, std: input.std });
    } else if (t.startsWith('keep-output:')) keepOutputs(model, t.slice('keep-output:'.length).split(','));
    else if (t.startsWith('input-size:')) {
      const [w, h] = t.slice('input-size:'.length).split('x').map(Number);
      inputSize(model, w ?? NaN, h ?? NaN);
    } else if (t.startsWith('quantize-int8:')) quantizeInt8(model, readCalibration(t.slice('quantize-int8:'.length)));
    else throw new Error(`Unknown model transform '${t}'`);
  }
  return encodeModel(model);
}

/** A calibration table committed beside the manifest (models/<file>). */
function readCalibration(file: string): CalibrationTable {
  const full = path.join(MODELS_DIR, file);
  if (!fs.existsSync(full)) throw new ModelError('model_source_missing', `Calibration table ${full} is missing`);
  return JSON.parse(fs.readFileSync(full, 'utf8')) as CalibrationTable;
}

/** Verify an assembled model file against its expected hash; throws a ModelError naming file and hash. */
export function verifyModelFile(file: string, expected: string): void {
  if (!fs.existsSync(file)) {
    throw new ModelError('model_missing', `Model file ${file} is missing (expected sha256 ${expected}); run 'npm run model'`);
  }
  const digest = sha256(fs.readFileSync(file));
  if (digest !== expected) {
    throw new ModelError('model_corrupt', `Model file ${file} has sha256 ${digest}, expected ${expected}; run 'npm run model' to rebuild it`);
  }
}

/** Path of the recorded hash of a transformed model (written at assembly, read at load). */
export function hashFileFor(file: string): string {
  return `${file}.sha256`;
}

/** Build one model into models/, skipping the work when the file is already there and intact. */
export function assembleModel(name: string, entry: ModelEntry): { file: string; sha256: string; rebuilt: boolean } {
  const file = path.join(MODELS_DIR, entry.file);
  const recorded = entry.sha256 ?? (fs.existsSync(hashFileFor(file)) ? fs.readFileSync(hashFileFor(file), 'utf8').trim() : null);
  if (recorded && fs.existsSync(file)) {
    try {
      verifyModelFile(file, recorded);
      return { file, sha256: recorded, rebuilt: false };
    } catch {
      // Fall through and rebuild.
    }
  }
  const source = readSourceModel(entry);
  const bytes = applyTransforms(source, entry.transforms, entry.input);
  const digest = sha256(bytes);
  if (entry.sha256 && digest !== entry.sha256) {
    throw new ModelError('model_corrupt', `Assembled ${name} has sha256 ${digest}, manifest expects ${entry.sha256}`);
  }
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
  fs.writeFileSync(hashFileFor(file), `${digest}\n`);
  return { file, sha256: digest, rebuilt: true };
}
