// Does the model see the same photo through both model-input paths? For every JPEG in bench/.photos
// that the model shrinks in both axes: the mask from libvips' shrink-on-load and cubic resize
// (codec.decodeForModel, the CPU path and the staged path over 16 MP) against the mask from a
// decode at the photo's own size resized by the addon (codec.resizeForModel, what the staged path's
// single decode gives, plan.singleDecode in pipeline.ts). Per photo and model: IoU at 0.5,
// mean absolute difference, and the inputs' mean byte difference.
//   node dist/bench/model-input-paths.js [--models isnet-int8,isnet-fp32] [--out DIR]
// Prints a table and writes model-input-paths.json to bench/results (or --out).
import fs from 'node:fs';
import path from 'node:path';
import { loadBinding } from '../src/native/binding.js';
import { modelEntry, PACKAGE_ROOT, sessionOptionsFor } from '../src/model/manifest.js';
import * as codec from '../src/worker/codec.js';
import { cpuFacts } from './cpu-facts.js';
import { markdownTable, median } from './stats.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}

function jpegsUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.jpe?g$/i.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

const binding = loadBinding();
const cpu = cpuFacts();
const rows: { photo: string; width: number; height: number; model: string; iou: number; maskMad: number; inputMad: number }[] = [];
for (const name of arg('models', 'isnet-int8,isnet-fp32').split(',')) {
  const model = modelEntry(name, 'cpu');
  const { width: mw, height: mh } = model.entry.input;
  const session = new binding.Session(model.path, sessionOptionsFor(model.entry, cpu.cores));
  for (const file of jpegsUnder(path.join(PACKAGE_ROOT, 'bench', '.photos'))) {
    const input = new Uint8Array(fs.readFileSync(file));
    const probe = await codec.probe(input);
    if (probe.hasAlpha || probe.width <= mw || probe.height <= mh) continue;
    const viaLibvips = await codec.decodeForModel(input, 50e6, mw, mh);
    const rgba = await codec.decodeRgba(input, 50e6, probe.width, probe.height, true);
    const inMemory = await codec.resizeForModel(rgba, mw, mh, true, cpu.cores);
    let inputDiff = 0;
    for (let i = 0; i < inMemory.data.length; i++) inputDiff += Math.abs(inMemory.data[i]! - viaLibvips.data[i]!);
    const a = Float32Array.from(session.infer(viaLibvips.data, 3));
    const b = session.infer(inMemory.data, 3);
    let inter = 0, union = 0, mad = 0;
    for (let i = 0; i < a.length; i++) {
      const x = a[i]! >= 0.5, y = b[i]! >= 0.5;
      if (x && y) inter++;
      if (x || y) union++;
      mad += Math.abs(a[i]! - b[i]!);
    }
    const row = { photo: path.basename(file), width: probe.width, height: probe.height, model: name, iou: union ? inter / union : 1, maskMad: mad / a.length, inputMad: inputDiff / inMemory.data.length };
    rows.push(row);
    console.error(`${name} ${row.photo}: IoU ${row.iou.toFixed(4)}, mask MAD ${row.maskMad.toFixed(5)}, input MAD ${row.inputMad.toFixed(2)} levels`);
  }
  session.close();
}

const table = markdownTable(
  ['photo', 'size', 'model', 'IoU (0.5)', 'mask mean abs diff', 'input mean abs diff (levels)'],
  rows.map((r) => [r.photo, `${r.width}×${r.height}`, r.model, r.iou.toFixed(4), r.maskMad.toFixed(5), r.inputMad.toFixed(2)]),
);
const models = [...new Set(rows.map((r) => r.model))];
const summary = models.map((m) => {
  const ious = rows.filter((r) => r.model === m).map((r) => r.iou);
  return `${m}: ${ious.length} photos, IoU min ${Math.min(...ious).toFixed(4)}, median ${median(ious).toFixed(4)}`;
});
console.log(`CPU: ${cpu.cores} × ${cpu.model} (${cpu.simd})\n\n${table}\n\n${summary.join('\n')}`);
const outDir = arg('out', path.join(PACKAGE_ROOT, 'bench', 'results'));
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'model-input-paths.json'), JSON.stringify({ date: new Date().toISOString(), cpu, rows, summary }, null, 2));
