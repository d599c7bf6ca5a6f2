// GET /healthz answers anyone: it names the device, the model and its hash, never a folder of the
// host (the device probe's reasons name build/Release or /proc/driver/nvidia; api/health.ts).
import t from 'tap';
import { chooseDevice } from '../../src/device/device.js';
import { withoutPaths } from '../../src/api/health.js';
import type { PoolInfo } from '../../src/pool/pool-api.js';
import { request } from '../helpers/http-client.js';
import { FakePool } from '../helpers/fake-pool.js';
import { startTestServer } from '../helpers/server.js';

function poolWith(reason: string): FakePool {
  const info: PoolInfo = {
    device: { kind: 'cpu', index: 0, label: 'cpu', reason },
    model: 'isnet-int8',
    modelFamily: 'isnet',
    modelSha256: 'ab'.repeat(32),
    workers: 1,
    threadsPerWorker: 2,
    memoryRelease: 'idle',
  };
  return Object.assign(new FakePool(), { info });
}

t.test("the real probe's reasons, as /healthz shows them: names and hashes, no folders", async (t) => {
  const noProvider = chooseDevice({ kind: 'auto', index: 0 }, { missingProvider: ['libonnxruntime_providers_cuda.so'], missingCuda: [], gpus: [] });
  const noGpu = chooseDevice({ kind: 'auto', index: 0 }, { missingProvider: [], missingCuda: [], gpus: [] });
  t.match(noProvider.reason, /build\/Release/, 'the start-up line names the folder');
  t.match(noGpu.reason, /\/proc\/driver\/nvidia\/gpus/);
  for (const reason of [noProvider.reason, noGpu.reason]) {
    const s = await startTestServer(t, { pool: poolWith(reason) });
    const res = await request(`${s.url}/healthz`);
    t.equal(res.status, 200);
    const text = res.text();
    t.notMatch(text, /build\/Release|\/proc\/|\/work\/|\/tmp\//, text);
    t.notMatch(text, s.config.dataDir, 'not the data folder');
    t.match(res.json(), { device: 'cpu', model: 'isnet-int8', model_family: 'isnet', model_sha256: 'ab'.repeat(32) });
  }
  const s = await startTestServer(t, { pool: poolWith(noProvider.reason) });
  t.equal(
    (await request(`${s.url}/healthz`)).json().device_reason,
    'no CUDA provider installed (libonnxruntime_providers_cuda.so missing beside libonnxruntime.so.1 in [path])',
    'the file names stay, the folder goes',
  );
});

t.test('withoutPaths: absolute, relative and home paths go; URLs, names and prose stay', async (t) => {
  t.equal(
    withoutPaths('Failed to load library /opt/cutout/build/Release/libonnxruntime_providers_cuda.so with error: x'),
    'Failed to load library [path] with error: x',
  );
  t.equal(withoutPaths('in ./data/ledger and ../models/x.onnx and ~/cache/y'), 'in [path] and [path] and [path]');
  t.equal(withoutPaths('CUDA 13 / cuDNN 9 libraries not found: libcudart.so.13'), 'CUDA 13 / cuDNN 9 libraries not found: libcudart.so.13');
  t.equal(withoutPaths('see https://github.com/xuebinqin/DIS'), 'see https://github.com/xuebinqin/DIS');
  t.equal(withoutPaths('cuda:0 (NVIDIA H100 80GB HBM3)'), 'cuda:0 (NVIDIA H100 80GB HBM3)');
});
