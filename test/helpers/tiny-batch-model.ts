// A tiny model with the batch contract (uint8 [N, H, W, 3] `pixels` in, float [N, 1, H, W] `output`):
// the mask is each pixel's brightness, mean(R, G, B) / 255. It runs in microseconds on the CPU, so
// the staged path and its batching are tested without a GPU and without ISNet's seconds per batch,
// and its masks are known exactly: a white square on black comes back as that square.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadOnnx } from '../../src/model/onnx-transform.js';

const FLOAT = 1;
const UINT8 = 2;

export function tinyBatchModelBytes(width = 1024, height = 1024): Uint8Array {
  const onnx = loadOnnx();
  const attrInts = (name: string, ints: number[]) => onnx.AttributeProto.create({ name, type: 7, ints });
  const attrInt = (name: string, i: number) => onnx.AttributeProto.create({ name, type: 2, i });
  const graph = onnx.GraphProto.create({
    name: 'brightness',
    input: [
      onnx.ValueInfoProto.create({
        name: 'pixels',
        type: { tensorType: { elemType: UINT8, shape: { dim: [{ dimParam: 'N' }, { dimValue: height }, { dimValue: width }, { dimValue: 3 }] } } },
      }),
    ],
    output: [
      onnx.ValueInfoProto.create({
        name: 'output',
        type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: 'N' }, { dimValue: 1 }, { dimValue: height }, { dimValue: width }] } } },
      }),
    ],
    initializer: [onnx.TensorProto.create({ name: 'scale', dataType: FLOAT, dims: [], rawData: new Uint8Array(new Float32Array([1 / 255]).buffer) })],
    node: [
      onnx.NodeProto.create({ opType: 'Cast', input: ['pixels'], output: ['f'], attribute: [attrInt('to', FLOAT)] }),
      onnx.NodeProto.create({ opType: 'ReduceMean', input: ['f'], output: ['mean'], attribute: [attrInts('axes', [3]), attrInt('keepdims', 1)] }),
      onnx.NodeProto.create({ opType: 'Transpose', input: ['mean'], output: ['nchw'], attribute: [attrInts('perm', [0, 3, 1, 2])] }),
      onnx.NodeProto.create({ opType: 'Mul', input: ['nchw', 'scale'], output: ['output'] }),
    ],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'cutout-tests', graph });
  return onnx.ModelProto.encode(model).finish();
}

/** Writes the tiny model to a temporary file (removed at exit) and returns its path. */
export function writeTinyBatchModel(width = 1024, height = 1024): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-tiny-model-'));
  const file = path.join(dir, 'brightness.onnx');
  fs.writeFileSync(file, tinyBatchModelBytes(width, height));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return file;
}
