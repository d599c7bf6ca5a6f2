// createRemovalPool when the file probe says CUDA is there but the provider will not load (a driver
// or library the probe cannot judge): `auto` serves on the CPU and says why, an explicit `cuda`
// stops with the provider's own error. Here the probe is a made-up GPU machine and the provider
// libraries really are absent, so loading them fails for real.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createRemovalPool } from '../../src/pool/pool.js';
import { ADDON_PATH } from '../../src/native/binding.js';
import type { CudaProbe } from '../../src/device/device.js';
import { assembleModel } from '../../src/model/assemble.js';
import { readManifest } from '../../src/model/manifest.js';

const gpuMachine: CudaProbe = { missingProvider: [], missingCuda: [], gpus: [{ index: 0, name: 'NVIDIA H100 80GB HBM3' }] };
// `auto` on a GPU machine picks the GPU's model first: it must exist for the provider to be tried.
const manifest = readManifest();
assembleModel(manifest.defaultCuda, manifest.models[manifest.defaultCuda]!);
const providerHere = fs.existsSync(path.join(path.dirname(ADDON_PATH), 'libonnxruntime_providers_shared.so'));

t.test(
  'auto: the provider fails to load, the pool serves on the CPU and says why',
  { skip: providerHere && 'the CUDA provider is installed here' },
  async (t) => {
    const pool = await createRemovalPool({ device: 'auto', probe: gpuMachine, workers: 1, threadsPerWorker: 1 });
    t.teardown(() => pool.close());
    t.equal(pool.info?.device.kind, 'cpu');
    t.match(
      pool.info?.device.reason,
      /^the CUDA provider failed to load: .*CUDA execution provider could not be loaded: .*libonnxruntime_providers_shared\.so/,
    );
    t.equal(pool.info?.model, 'isnet-int8', 'the CPU default model, not the GPU one');
  },
);

t.test('cuda: the same failure stops the start with the provider error', { skip: providerHere && 'the CUDA provider is installed here' }, async (t) => {
  await t.rejects(createRemovalPool({ device: 'cuda', probe: gpuMachine, workers: 1, threadsPerWorker: 1, model: 'isnet-int8' }), {
    code: 'ERR_CUTOUT_POOL_START',
    message: /CUDA execution provider could not be loaded: .*libonnxruntime_providers_shared\.so/,
  });
});
