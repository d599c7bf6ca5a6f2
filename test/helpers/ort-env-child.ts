// Child process for test/native/ort-telemetry: loads the addon, runs the tiny batch model once (so
// ONNX Runtime creates its process-wide Env), then prints the pid and what ORT_DISABLE_TELEMETRY
// ended up as. `node ort-env-child.js <model.onnx> <width> <height>`.
import { loadBinding } from '../../src/native/binding.js';

const [model, w, h] = process.argv.slice(2);
const width = Number(w);
const height = Number(h);
const binding = loadBinding();
const session = new binding.BatchSession(model!, {
  threads: 1,
  inputName: 'pixels',
  outputName: 'output',
  width,
  height,
  mean: [0, 0, 0],
  std: [1, 1, 1],
  maxBatch: 1,
});
const [mask] = session.run([new Uint8Array(width * height * 3)]);
session.close();
process.stdout.write(
  `${JSON.stringify({ pid: process.pid, maskLength: mask?.length ?? 0, ORT_DISABLE_TELEMETRY: process.env.ORT_DISABLE_TELEMETRY ?? null })}\n`,
);
