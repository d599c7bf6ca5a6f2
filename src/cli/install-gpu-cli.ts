#!/usr/bin/env node
// `npm run gpu` (or `CUTOUT_GPU=cuda13 npm ci`): ONNX Runtime's CUDA provider beside the addon, the
// batch model for the GPU, then what `--device auto` will pick here and why.
//   --if-requested   do nothing unless CUTOUT_GPU asks for it (the install script's call)
//   --keep-tarball   keep the downloaded package in build/gpu-cache
import path from 'node:path';
import { ADDON_PATH } from '../native/addon-path.js';
import { PACKAGE_ROOT, readManifest } from '../model/manifest.js';
import { assembleModel } from '../model/assemble.js';
import { CUDA_PROVIDER_PACKAGE } from '../device/cuda-provider-package.js';
import { installProvider } from '../device/install-provider.js';
import { chooseDevice, probeCuda } from '../device/device.js';

const args = process.argv.slice(2);
const wanted = process.env.CUTOUT_GPU;
if (args.includes('--if-requested') && !wanted) process.exit(0);
if (wanted && wanted !== 'cuda13') {
  console.error(`cutout gpu: CUTOUT_GPU=${wanted} is not known: the one GPU build is 'cuda13' (ONNX Runtime 1.29, CUDA 13, cuDNN 9)`);
  process.exit(2);
}

const log = (line: string): void => console.log(`cutout gpu: ${line}`);
try {
  const libDir = path.dirname(ADDON_PATH);
  installProvider({
    pkg: CUDA_PROVIDER_PACKAGE,
    libDir,
    cacheDir: path.join(PACKAGE_ROOT, 'build', 'gpu-cache'),
    keepTarball: args.includes('--keep-tarball'),
    log,
  });
  const manifest = readManifest();
  const name = manifest.defaultCuda;
  const model = assembleModel(name, manifest.models[name]!);
  log(`model ${name} ${model.rebuilt ? 'assembled' : 'verified'} → ${model.file}`);
  const probe = probeCuda({ libDir });
  const choice = chooseDevice({ kind: 'auto', index: 0 }, probe);
  log(`--device auto will use: ${choice.label} (${choice.reason})`);
  if (choice.kind === 'cpu') log('the provider is installed; the line above says what this machine still lacks for the GPU');
} catch (err) {
  console.error(`cutout gpu: ${(err as Error).message}`);
  process.exit(1);
}
