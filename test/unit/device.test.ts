// device/device.ts: --device parsing, the CUDA probe over fake folders, and the choice with its
// reason (auto falls back to the CPU and says why; an explicit cuda that cannot be had is an error).
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { chooseDevice, CUDA_LIBS, gpusFromNvidiaSmi, listGpus, probeCuda, PROVIDER_LIBS, type CudaProbe } from '../../src/device/device.js';
import { type DeviceError, parseDevice } from '../../src/domain/device-request.js';

t.test('parseDevice', async (t) => {
  t.same(parseDevice(undefined), { kind: 'auto', index: 0 });
  t.same(parseDevice('AUTO'), { kind: 'auto', index: 0 });
  t.same(parseDevice('cpu'), { kind: 'cpu', index: 0 });
  t.same(parseDevice('cuda'), { kind: 'cuda', index: 0 });
  t.same(parseDevice('cuda:3'), { kind: 'cuda', index: 3 });
  for (const bad of ['gpu', 'cuda:', 'cuda:x', 'cuda:123', 'rocm', 'cpu:0']) {
    t.throws(
      () => parseDevice(bad),
      { name: 'DeviceError', code: 'ERR_CUTOUT_DEVICE', message: `Expected auto, cpu, cuda or cuda:N for device but received '${bad}'` },
      bad,
    );
  }
});

/** A fake machine: a lib folder, a CUDA folder and /proc/driver/nvidia, each filled as asked. */
function machine(
  t: Test,
  opts: { provider?: readonly string[]; cuda?: readonly string[]; gpus?: Array<[string, string, number]>; smi?: Array<{ index: number; name: string }> },
) {
  const root = t.testdir({ lib: {}, cuda: {}, nvidia: { gpus: {} } });
  for (const f of opts.provider ?? []) fs.writeFileSync(path.join(root, 'lib', f), '');
  for (const f of opts.cuda ?? []) fs.writeFileSync(path.join(root, 'cuda', f), '');
  for (const [bus, model, minor] of opts.gpus ?? []) {
    fs.mkdirSync(path.join(root, 'nvidia', 'gpus', bus));
    fs.writeFileSync(path.join(root, 'nvidia', 'gpus', bus, 'information'), `Model: \t\t ${model}\nIRQ:   \t\t 42\nDevice Minor: \t ${minor}\n`);
  }
  return probeCuda({
    libDir: path.join(root, 'lib'),
    nvidiaProcDir: path.join(root, 'nvidia'),
    libSearchPath: [path.join(root, 'cuda')],
    ldconfigOutput: '',
    nvidiaSmi: () => opts.smi ?? [],
  });
}

const H100: [string, string, number] = ['0000:c1:00.0', 'NVIDIA H100 80GB HBM3', 0];

t.test('a CPU box: auto picks the CPU and says why; cuda is refused naming what is missing', async (t) => {
  const probe = machine(t, {});
  t.same(probe.missingProvider, [...PROVIDER_LIBS]);
  t.same(chooseDevice(parseDevice('auto'), probe), {
    kind: 'cpu',
    index: 0,
    label: 'cpu',
    reason:
      'no CUDA provider installed (libonnxruntime_providers_shared.so, libonnxruntime_providers_cuda.so missing beside libonnxruntime.so.1 in build/Release)',
  });
  t.throws(() => chooseDevice(parseDevice('cuda'), probe), { name: 'DeviceError', message: /^--device cuda cannot be used: no CUDA provider installed/ });
  t.same(chooseDevice(parseDevice('cpu'), probe), { kind: 'cpu', index: 0, label: 'cpu', reason: 'requested' });
});

t.test('provider installed but no GPU, or no CUDA libraries', async (t) => {
  const noGpu = machine(t, { provider: PROVIDER_LIBS, cuda: CUDA_LIBS });
  t.equal(chooseDevice(parseDevice('auto'), noGpu).reason, 'no NVIDIA GPU found (no driver: none in /proc/driver/nvidia/gpus, and nvidia-smi lists none)');
  t.throws(() => chooseDevice(parseDevice('cuda:0'), noGpu), /no NVIDIA GPU found/);

  const noLibs = machine(t, { provider: PROVIDER_LIBS, cuda: ['libcudart.so.13'], gpus: [H100] });
  t.same(noLibs.missingCuda, ['libcublas.so.13', 'libcublasLt.so.13', 'libcurand.so.10', 'libcudnn.so.9']);
  t.throws(() => chooseDevice(parseDevice('cuda'), noLibs), {
    message:
      '--device cuda cannot be used: CUDA 13 / cuDNN 9 libraries not found: libcublas.so.13, libcublasLt.so.13, libcurand.so.10, libcudnn.so.9 (add their folders to LD_LIBRARY_PATH)',
  });
  t.equal(chooseDevice(parseDevice('auto'), noLibs).kind, 'cpu');
});

t.test('a GPU box: auto and cuda take the GPU; a missing index is named', async (t) => {
  const probe: CudaProbe = machine(t, { provider: PROVIDER_LIBS, cuda: CUDA_LIBS, gpus: [H100, ['0000:c2:00.0', 'NVIDIA H100 80GB HBM3', 1]] });
  t.same(
    probe.gpus.map((g) => g.index),
    [0, 1],
  );
  t.same(chooseDevice(parseDevice('auto'), probe), { kind: 'cuda', index: 0, label: 'cuda:0 (NVIDIA H100 80GB HBM3)', reason: 'CUDA provider and GPU found' });
  t.same(chooseDevice(parseDevice('cuda:1'), probe), { kind: 'cuda', index: 1, label: 'cuda:1 (NVIDIA H100 80GB HBM3)', reason: 'requested' });
  const err = t.throws(() => chooseDevice(parseDevice('cuda:2'), probe)) as DeviceError;
  t.equal(err.message, '--device cuda:2 cannot be used: no GPU cuda:2 (found cuda:0, cuda:1)');
});

t.test('a sandbox that hides /proc/driver/nvidia: the GPUs nvidia-smi lists count', async (t) => {
  const probe = machine(t, { provider: PROVIDER_LIBS, cuda: CUDA_LIBS, smi: [{ index: 0, name: 'NVIDIA H200' }] });
  t.same(chooseDevice(parseDevice('auto'), probe), { kind: 'cuda', index: 0, label: 'cuda:0 (NVIDIA H200)', reason: 'CUDA provider and GPU found' });
  t.same(
    gpusFromNvidiaSmi(() => '0, NVIDIA H100 80GB HBM3\n1, NVIDIA H100 80GB HBM3\n'),
    [
      { index: 0, name: 'NVIDIA H100 80GB HBM3' },
      { index: 1, name: 'NVIDIA H100 80GB HBM3' },
    ],
  );
  t.same(
    gpusFromNvidiaSmi(() => null),
    [],
    'no nvidia-smi, or it failed: no GPU',
  );
  t.same(
    gpusFromNvidiaSmi(() => 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\n'),
    [],
  );
});

t.test('listGpus: no driver folder is no GPU; a garbled information file still counts', async (t) => {
  t.same(listGpus('/nonexistent/driver/nvidia'), []);
  const root = t.testdir({ gpus: { a: { information: 'garbage' } } });
  t.same(listGpus(root), [{ index: 0, name: 'NVIDIA GPU' }]);
});
