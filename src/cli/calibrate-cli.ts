#!/usr/bin/env node
// `npm run model:calibrate`: measure the activation ranges of the fp32 model on real photos and write
// the calibration table the int8 model is assembled from (models/<table>, committed).
//
// A maintenance tool, not part of install: install only reads the committed table, so the int8 model
// is reproducible byte for byte. The photos come from Debian packages (apt-get download), never from
// the evaluation set, so quality measured on eval/dev stays an honest held-out figure.
import fs from 'node:fs';
import path from 'node:path';
import { calibrationInput, calibrationPhotoNames, CALIBRATION_DESCRIPTION, defaultCalibrationPhotos, measureRanges } from '../model/calibration-run.js';
import { MODELS_DIR, modelEntry } from '../model/manifest.js';
import type { CalibrationTable } from '../model/quantize.js';

async function main(): Promise<void> {
  const source = modelEntry(process.argv[2] ?? 'isnet-fp32');
  const target = process.argv[3] ?? 'isnet-int8.calibration.json';
  // The float model's input (the manifest's 'nchw-f32'): its name, size and normalisation.
  const { name, width, height, mean, std } = source.entry.input;
  const input = { name, width, height, mean, std };
  const photos = defaultCalibrationPhotos();
  console.log(`calibrate: ${photos.length} photos, model ${source.name}`);
  const inputs = await Promise.all(photos.map((p) => calibrationInput(p, input)));
  const ranges = await measureRanges(fs.readFileSync(source.path), input, inputs, (text) => process.stdout.write(`\rcalibrate: ${text}`));
  process.stdout.write('\n');
  const table: CalibrationTable & { model: string; photos: string[] } = {
    description: CALIBRATION_DESCRIPTION,
    model: source.name,
    photos: calibrationPhotoNames(),
    float: [],
    ranges,
  };
  const out = path.join(MODELS_DIR, target);
  fs.writeFileSync(out, `${JSON.stringify(table, null, 1)}\n`);
  console.log(`calibrate: wrote ${out} (${Object.keys(ranges).length} tensors)`);
}

main().catch((err: Error) => {
  console.error(`calibrate: ${err.message}`);
  process.exit(1);
});
