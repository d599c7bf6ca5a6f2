// The model's raw mattes for the evaluation items, cached on disk (bench/.cache/, git-ignored) so that
// tuning and cross-validating the composite stages never runs inference twice. A view is a model, an
// input size and an optional horizontal flip; the matte is the model's float output at that size,
// flipped back. The model input is what the pipeline feeds it (codec.decodeForModel).
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT, modelEntry, sessionOptionsFor } from '../src/model/manifest.js';
import { applyTransforms } from '../src/model/assemble.js';
import { decodeModel, encodeModel } from '../src/model/onnx-transform.js';
import { quantizeInt8, type CalibrationTable } from '../src/model/quantize.js';
import type { NativeBinding, NativeSession } from '../src/native/binding.js';
import * as codec from '../src/worker/codec.js';

export interface MatteView {
  model: string;
  /** Square input side (1024 = as shipped; others through the input-size transform). */
  size: number;
  flip: boolean;
}

export function viewKey(v: MatteView): string {
  return `${v.model}@${v.size}${v.flip ? '-flip' : ''}`;
}

export const CACHE_DIR = path.join(PACKAGE_ROOT, 'bench', '.cache', 'mattes');

/**
 * A calibration experiment, `isnet-int8~clipF`: the fp32 model quantised with every committed
 * activation range scaled by F (F < 1 clips harder), built once into bench/.cache/models.
 */
function clippedInt8(model: string): string {
  const factor = Number(model.split('~clip')[1]);
  if (!(factor > 0)) throw new Error(`bad calibration experiment ${model}`);
  const out = path.join(PACKAGE_ROOT, 'bench', '.cache', 'models', `${model}.onnx`);
  if (fs.existsSync(out)) return out;
  const table = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'models', 'isnet-int8.calibration.json'), 'utf8')) as CalibrationTable;
  const ranges = Object.fromEntries(Object.entries(table.ranges).map(([k, [lo, hi]]) => [k, [lo * factor, hi * factor] as [number, number]]));
  const graph = decodeModel(fs.readFileSync(modelEntry('isnet-fp32').path));
  quantizeInt8(graph, { ...table, ranges });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, encodeModel(graph));
  return out;
}

/** The model file for a view's size: the manifest's for 1024, else rewritten once into bench/.cache/models. */
function modelFile(model: string, size: number): string {
  if (model.includes('~clip')) {
    if (size !== 1024) throw new Error('calibration experiments run at 1024² only');
    return clippedInt8(model);
  }
  const { entry, path: file } = modelEntry(model);
  if (size === entry.input.width && size === entry.input.height) return file;
  const out = path.join(PACKAGE_ROOT, 'bench', '.cache', 'models', `${model}-${size}.onnx`);
  if (!fs.existsSync(out)) {
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, applyTransforms(fs.readFileSync(file), [`input-size:${size}x${size}`]));
  }
  return out;
}

/** Mirror an interleaved image (rows of `width` pixels, `channels` each) left to right, in place. */
export function flipRows(data: Uint8Array | Float32Array, width: number, height: number, channels: number): void {
  for (let y = 0; y < height; y++) {
    const row = y * width * channels;
    for (let a = 0, b = width - 1; a < b; a++, b--) {
      for (let c = 0; c < channels; c++) {
        const i = row + a * channels + c,
          j = row + b * channels + c;
        const t = data[i]!;
        data[i] = data[j]!;
        data[j] = t;
      }
    }
  }
}

export class MatteCache {
  private readonly sessions = new Map<string, NativeSession>();
  inferences = 0;
  inferSeconds = 0;

  constructor(
    private readonly binding: NativeBinding,
    private readonly threads = 2,
  ) {}

  private session(view: MatteView): NativeSession {
    const key = `${view.model}@${view.size}`;
    let s = this.sessions.get(key);
    if (!s) {
      const { entry } = modelEntry(view.model.split('~')[0]);
      const options = { ...sessionOptionsFor(entry, this.threads), width: view.size, height: view.size };
      s = new this.binding.Session(modelFile(view.model, view.size), options);
      this.sessions.set(key, s);
    }
    return s;
  }

  /** The view's matte for one item (size² floats), from disk or computed and stored. */
  async matte(view: MatteView, id: string, imageBytes: Uint8Array): Promise<Float32Array> {
    const file = path.join(CACHE_DIR, viewKey(view), `${id}.f32`);
    if (fs.existsSync(file)) {
      const b = fs.readFileSync(file);
      return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    }
    const input = await codec.decodeForModel(imageBytes, 50_000_000, view.size, view.size);
    if (view.flip) flipRows(input.data, view.size, view.size, 3);
    const t0 = performance.now();
    const out = Float32Array.from(this.session(view).infer(input.data, 3));
    this.inferSeconds += (performance.now() - t0) / 1000;
    this.inferences++;
    if (view.flip) flipRows(out, view.size, view.size, 1);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, out);
    return out;
  }

  close(): void {
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
  }
}
