// The start-up line (cutout serve) names the device, why, the model and the sizing: workers × threads
// on the CPU path, batches and inference workers on the staged (GPU) path.
import t from 'tap';
import { describeModelFacts, describePool } from '../../src/cli/serve-command.js';
import type { RemovalPool } from '../../src/pool/pool-api.js';

const pool = (info: RemovalPool['info']): RemovalPool => ({
  info,
  ready: true,
  stats: () => ({ workers: 1, running: 0, queued: 0, longestWaitMs: 0, started: 0, batches: 0, dropped: 0 }),
  run: () => Promise.reject(new Error('unused')),
  close: async () => {},
});

t.equal(
  describePool(
    pool({ device: { kind: 'cpu', index: 0, label: 'cpu', reason: 'requested' }, model: 'isnet-int8', workers: 1, threadsPerWorker: 2, memoryRelease: 'idle' }),
  ),
  'device: cpu (requested); model isnet-int8; 1 worker × 2 threads',
);
t.equal(
  describePool(
    pool({
      device: { kind: 'cuda', index: 0, label: 'cuda:0 (NVIDIA H100 80GB HBM3)', reason: 'CUDA provider and GPU found' },
      model: 'isnet-fp16-batch',
      workers: 16,
      threadsPerWorker: 1,
      batching: { maxBatch: 8, maxWaitMs: 2, inferWorkers: 2 },
      memoryRelease: 'idle',
    }),
  ),
  'device: cuda:0 (NVIDIA H100 80GB HBM3) (CUDA provider and GPU found); model isnet-fp16-batch; batches of up to 8 (wait ≤ 2 ms) on 2 inference workers; 16 photo workers',
);
t.equal(describePool(pool(undefined)), 'device: unknown');

// The model's family and file hash, and on a GPU without the staged path, that each photo runs alone.
const sha = 'ab'.repeat(32);
t.equal(
  describeModelFacts(
    pool({
      device: { kind: 'cpu', index: 0, label: 'cpu', reason: 'requested' },
      model: 'birefnet.onnx',
      modelFamily: 'birefnet',
      modelSha256: sha,
      workers: 1,
      threadsPerWorker: 2,
      memoryRelease: 'idle',
    }),
  ),
  `model birefnet.onnx: family birefnet, sha256 ${sha}`,
);
t.equal(
  describeModelFacts(
    pool({
      device: { kind: 'cuda', index: 0, label: 'cuda:0', reason: 'requested' },
      model: 'u2net.onnx',
      modelFamily: 'u2net',
      modelSha256: sha,
      workers: 1,
      threadsPerWorker: 1,
      memoryRelease: 'idle',
    }),
  ),
  `model u2net.onnx: family u2net, sha256 ${sha}; one photo per inference run (no batching across requests on this path)`,
);
t.equal(
  describeModelFacts(
    pool({
      device: { kind: 'cuda', index: 0, label: 'cuda:0', reason: 'requested' },
      model: 'rmbg.onnx',
      modelFamily: 'rmbg',
      modelSha256: sha,
      modelBatch: 'fixed',
      workers: 1,
      threadsPerWorker: 1,
      memoryRelease: 'idle',
    }),
  ),
  `model rmbg.onnx: family rmbg, sha256 ${sha}; one photo per inference run (the file's batch dimension is fixed at 1)`,
  'a file with a fixed batch says why it runs alone',
);
t.equal(
  describeModelFacts(
    pool({
      device: { kind: 'cuda', index: 0, label: 'cuda:0', reason: 'requested' },
      model: 'birefnet.onnx',
      modelFamily: 'birefnet',
      modelSha256: sha,
      modelBatch: 'symbolic',
      batching: { maxBatch: 8, maxWaitMs: 2, inferWorkers: 1 },
      workers: 16,
      threadsPerWorker: 1,
      memoryRelease: 'idle',
    }),
  ),
  `model birefnet.onnx: family birefnet, sha256 ${sha}`,
  'a batching file: describePool says how it batches',
);
t.equal(
  describeModelFacts(
    pool({ device: { kind: 'cpu', index: 0, label: 'cpu', reason: 'requested' }, model: 'isnet-int8', workers: 1, threadsPerWorker: 2, memoryRelease: 'idle' }),
  ),
  'model isnet-int8: family unknown, sha256 not recorded',
);
