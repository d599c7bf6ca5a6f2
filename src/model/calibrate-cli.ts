#!/usr/bin/env node
// `npm run model:calibrate`: measure the activation ranges of the fp32 model on real photos and write
// the calibration table the int8 model is assembled from (models/<table>, committed).
//
// A maintenance tool, not part of install: install only reads the committed table, so the int8 model
// is reproducible byte for byte. The photos come from Debian packages (apt-get download), never from
// the evaluation set, so quality measured on eval/dev stays an honest held-out figure.
import fs from 'node:fs';
import path from 'node:path';
import { activationTensors, Histogram, percentileClipRange } from './calibration.js';
import { debianFiles } from './debian-files.js';
import { MODELS_DIR, modelEntry, PACKAGE_ROOT } from './manifest.js';
import { decodeModel, encodeModel, loadOnnx } from './onnx-transform.js';
import type { CalibrationTable } from './quantize.js';

/** People, animals, objects and scenes, in colour: what a background remover is asked to cut. */
export const CALIBRATION_PHOTOS: Record<string, string[]> = {
  'mate-backgrounds': [
    'abstract/Elephants.jpg', 'nature/Aqua.jpg', 'nature/Blinds.jpg', 'nature/Dune.jpg', 'nature/FreshFlower.jpg',
    'nature/Garden.jpg', 'nature/GreenMeadow.jpg', 'nature/LadyBird.jpg', 'nature/RainDrops.jpg', 'nature/Storm.jpg',
    'nature/TwoWings.jpg', 'nature/Wood.jpg', 'nature/YellowFlower.jpg',
  ].map((f) => `usr/share/backgrounds/mate/${f}`),
  'lomiri-wallpapers-20.04': ['Fossa_by_Jasper_Roks.jpg', 'Kleiber_by_Lukas_Baubkus.jpg'].map((f) => `usr/share/backgrounds/${f}`),
  'ukui-wallpapers': ['firstgeneration.jpg', 'string.jpg', 'the-mouse.jpg'].map((f) => `usr/share/backgrounds/${f}`),
  'opencv-doc': [
    'aero1.jpg', 'apple.jpg', 'baboon.jpg', 'basketball1.png', 'basketball2.png', 'building.jpg', 'butterfly.jpg',
    'fruits.jpg', 'home.jpg', 'messi5.jpg', 'orange.jpg', 'squirrel_cls.jpg',
  ].map((f) => `usr/share/doc/opencv-doc/examples/data/${f}`),
  'python3-skimage': ['astronaut.png', 'chelsea.png', 'coffee.png', 'motorcycle_left.png', 'rocket.jpg'].map(
    (f) => `usr/lib/python3/dist-packages/skimage/data/${f}`,
  ),
};

/** Output tensors fetched per session run: bounds the memory of one calibration pass (~3 GB). */
const GROUP = 100;

async function modelInput(file: string, width: number, height: number, mean: number[], std: number[]): Promise<Float32Array> {
  const sharp = (await import('sharp')).default;
  const rgb = await sharp(file).rotate().resize(width, height, { fit: 'fill' }).removeAlpha().toColourspace('srgb').raw().toBuffer();
  const plane = width * height;
  const x = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) x[c * plane + i] = (rgb[i * 3 + c]! - mean[c]!) / std[c]!;
  return x;
}

async function main(): Promise<void> {
  const source = modelEntry(process.argv[2] ?? 'isnet-fp32');
  const target = process.argv[3] ?? 'isnet-int8.calibration.json';
  const { width, height, mean, std, name: inputName } = source.entry.input;
  const cache = path.join(PACKAGE_ROOT, 'models', '.calibration-photos');
  const photos = Object.entries(CALIBRATION_PHOTOS).flatMap(([pkg, files]) => debianFiles(cache, pkg, files));
  console.log(`calibrate: ${photos.length} photos, model ${source.name}`);
  const inputs = await Promise.all(photos.map((p) => modelInput(p, width, height, mean, std)));

  const ort = (await import('onnxruntime-node')).default;
  const onnx = loadOnnx();
  const bytes = fs.readFileSync(source.path);
  const names = activationTensors(decodeModel(bytes));
  const hists = new Map(names.map((n) => [n, new Histogram()]));
  for (let g = 0; g < names.length; g += GROUP) {
    const group = names.slice(g, g + GROUP);
    const model = decodeModel(bytes);
    const outputs = new Set(model.graph.output.map((o: { name: string }) => o.name));
    for (const n of group) if (!outputs.has(n)) model.graph.output.push(onnx.ValueInfoProto.create({ name: n, type: { tensorType: { elemType: 1 } } }));
    // 'basic' keeps every intermediate tensor (fusions would drop some of the names we fetch).
    const session = await ort.InferenceSession.create(encodeModel(model), { graphOptimizationLevel: 'basic' });
    for (const [i, x] of inputs.entries()) {
      const res = await session.run({ [inputName]: new ort.Tensor('float32', x, [1, 3, height, width]) }, group);
      for (const n of group) hists.get(n)!.add(res[n]!.data as Float32Array);
      process.stdout.write(`\rcalibrate: tensors ${g + 1}-${g + group.length} of ${names.length}, photo ${i + 1}/${inputs.length}`);
    }
    await session.release();
  }
  process.stdout.write('\n');
  const ranges: CalibrationTable['ranges'] = {};
  for (const [n, h] of hists) ranges[n] = percentileClipRange(h).map((v) => Number(v.toPrecision(7))) as [number, number];
  const table: CalibrationTable & { model: string; photos: string[] } = {
    description: 'uint8 activation ranges per tensor: 0.01%/99.99% quantiles of a 2048-bin histogram pooled over the photos',
    model: source.name,
    photos: Object.entries(CALIBRATION_PHOTOS).flatMap(([pkg, files]) => files.map((f) => `${pkg}:${path.basename(f)}`)),
    float: [],
    ranges,
  };
  const out = path.join(MODELS_DIR, target);
  fs.writeFileSync(out, `${JSON.stringify(table, null, 1)}\n`);
  console.log(`calibrate: wrote ${out} (${names.length} tensors)`);
}

main().catch((err: Error) => {
  console.error(`calibrate: ${err.message}`);
  process.exit(1);
});
