// One decode in a process of its own, against its estimate: `node decode-stage-child.js FILE STAGE`,
// STAGE = model (1024² RGB) or out-<size tier> (RGBA at that tier's output size). Prints one JSON line:
// the peak above the warmed-up process (VmHWM − VmRSS before, MB), the estimate (MB), the time (ms).
// docs/memory.md's per-stage table was measured with it.
import { readFileSync } from 'node:fs';
import * as codec from '../../src/worker/codec.js';
import { decodeCost } from '../../src/worker/decode-budget.js';
import { outputSize } from '../../src/worker/geometry.js';
import { modelDecodeCost } from '../../src/worker/pipeline.js';
import { loadBinding } from '../../src/native/binding.js';
import { collectGarbage } from '../../src/process/collect-garbage.js';
import type { SizeTier } from '../../src/domain/removal.js';

export interface StageReport {
  peakMb: number;
  estimateMb: number;
  ms: number;
}

const [file, stage] = process.argv.slice(2) as [string, string];
// The addon sets the worker's malloc tuning (a fixed 64 KiB mmap threshold) when it loads.
const binding = loadBinding();
const mb = (key: 'VmHWM' | 'VmRSS') => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

// libvips' own start-up belongs to the baseline.
const warm = await codec.encodePng({ data: Buffer.alloc(64 * 64 * 4), width: 64, height: 64, channels: 4 });
await codec.decodeForModel(warm.data, 50e6, 32, 32);
const input = new Uint8Array(readFileSync(file));
const probe = await codec.probe(input);
collectGarbage();
await new Promise((resolve) => setImmediate(resolve));
binding.trimMemory();

const before = mb('VmRSS');
const start = performance.now();
let estimate: number;
if (stage === 'model') {
  // As the pipeline plans and decodes it (in memory where the photo is enlarged, else libvips).
  estimate = modelDecodeCost(probe, { width: 1024, height: 1024 }).total;
  await codec.decodeForModel(input, 50e6, 1024, 1024, probe);
} else {
  const out = outputSize(probe, stage.replace(/^out-/, '') as SizeTier);
  const full = out.width === probe.width && out.height === probe.height;
  estimate = decodeCost(probe.header, { ...out, channels: 4, resize: !full }).total;
  await codec.decodeRgba(input, 50e6, out.width, out.height, full);
}
const report: StageReport = {
  peakMb: Math.round(mb('VmHWM') - before),
  estimateMb: Math.round(estimate / (1024 * 1024)),
  ms: Math.round(performance.now() - start),
};
process.stdout.write(`${JSON.stringify(report)}\n`);
