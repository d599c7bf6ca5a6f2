// Which device runs inference: `--device auto|cpu|cuda[:N]` (CUTOUT_DEVICE, createRemover({ device })).
// `auto` takes CUDA when ONNX Runtime's CUDA provider libraries sit beside libonnxruntime.so.1, the
// CUDA/cuDNN libraries it needs can be found and an NVIDIA GPU is present; the CPU otherwise, with
// the reason. An explicit `cuda` that cannot be had is an error naming what is missing: never a
// silent fallback. Imports nothing of ours; the probe reads the file system only.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { DeviceError, type DeviceKind, type DeviceRequest } from '../domain/device-request.js';

export interface DeviceChoice {
  kind: DeviceKind;
  index: number;
  /** `cpu` or `cuda:0 (NVIDIA H100 80GB HBM3)`. */
  label: string;
  /** Why this device: "requested", "no CUDA provider installed", … */
  reason: string;
}

/** ONNX Runtime's CUDA provider: its two libraries belong beside libonnxruntime.so.1 (build/Release). */
export const PROVIDER_LIBS = ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so'] as const;
/** What the provider (ORT 1.29, CUDA 13 build) loads: CUDA 13 runtime, cuBLAS, cuRAND, cuDNN 9. */
export const CUDA_LIBS = ['libcudart.so.13', 'libcublas.so.13', 'libcublasLt.so.13', 'libcurand.so.10', 'libcudnn.so.9'] as const;

export interface Gpu {
  index: number;
  name: string;
}

export interface CudaProbe {
  /** Provider libraries missing from the addon's folder. */
  missingProvider: string[];
  /** CUDA/cuDNN libraries not found on the loader's path. */
  missingCuda: string[];
  gpus: Gpu[];
}

export interface ProbeOptions {
  /** The folder holding libonnxruntime.so.1 (build/Release). */
  libDir: string;
  /** /proc/driver/nvidia (tests point it elsewhere). */
  nvidiaProcDir?: string;
  /** GPUs by `nvidia-smi`, asked only when the driver's /proc folder lists none; default: run it. */
  nvidiaSmi?: () => Gpu[];
  /** Library folders searched before ldconfig's cache (default: LD_LIBRARY_PATH + CUDA's usual places). */
  libSearchPath?: string[];
  /** `ldconfig -p` output; default: run it. */
  ldconfigOutput?: string;
}

const DEFAULT_CUDA_DIRS = ['/usr/local/cuda/lib64', '/usr/local/cuda/targets/x86_64-linux/lib', '/usr/lib/x86_64-linux-gnu', '/usr/lib64'];

/** /usr/local/cuda-13.0/targets/x86_64-linux/lib and the like. */
function versionedCudaDirs(): string[] {
  try {
    return fs
      .readdirSync('/usr/local')
      .filter((d) => /^cuda-\d/.test(d))
      .map((d) => path.join('/usr/local', d, 'targets', 'x86_64-linux', 'lib'));
  } catch {
    return [];
  }
}

function ldconfigCache(): string {
  const r = spawnSync('ldconfig', ['-p'], { encoding: 'utf8', timeout: 5_000 });
  return r.status === 0 ? r.stdout : '';
}

/** GPUs the NVIDIA driver lists (/proc/driver/nvidia/gpus/<bus>/information: Model, Device Minor). */
export function listGpus(procDir = '/proc/driver/nvidia'): Gpu[] {
  const dir = path.join(procDir, 'gpus');
  let buses: string[];
  try {
    buses = fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
  const gpus: Gpu[] = [];
  for (const bus of buses) {
    let info = '';
    try {
      info = fs.readFileSync(path.join(dir, bus, 'information'), 'utf8');
    } catch {
      continue;
    }
    const name = /^Model:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? 'NVIDIA GPU';
    const minor = Number(/^Device Minor:\s*(\d+)/m.exec(info)?.[1] ?? gpus.length);
    gpus.push({ index: minor, name });
  }
  return gpus.sort((a, b) => a.index - b.index);
}

/** `nvidia-smi --query-gpu=index,name`: the GPUs the driver serves, or none when there is no tool or no driver. */
export function gpusFromNvidiaSmi(run: () => string | null = nvidiaSmiOutput): Gpu[] {
  const out = run();
  if (!out) return [];
  const gpus: Gpu[] = [];
  for (const line of out.split('\n')) {
    const m = /^\s*(\d+)\s*,\s*(.+?)\s*$/.exec(line);
    if (m) gpus.push({ index: Number(m[1]), name: m[2]! });
  }
  return gpus.sort((a, b) => a.index - b.index);
}

function nvidiaSmiOutput(): string | null {
  const r = spawnSync('nvidia-smi', ['--query-gpu=index,name', '--format=csv,noheader'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? r.stdout : null;
}

export function probeCuda(opts: ProbeOptions): CudaProbe {
  const missingProvider = PROVIDER_LIBS.filter((f) => !fs.existsSync(path.join(opts.libDir, f)));
  const search = opts.libSearchPath ?? [...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean), ...versionedCudaDirs(), ...DEFAULT_CUDA_DIRS];
  let cache: string | undefined = opts.ldconfigOutput;
  const found = (lib: string): boolean => {
    if (search.some((d) => fs.existsSync(path.join(d, lib)))) return true;
    cache ??= ldconfigCache();
    return cache.includes(`${lib} `) || cache.includes(`/${lib}\n`);
  };
  // Without the provider the CUDA libraries do not matter: skip the look-up.
  const missingCuda = missingProvider.length ? [] : CUDA_LIBS.filter((l) => !found(l));
  let gpus = listGpus(opts.nvidiaProcDir);
  // Sandboxed kernels (gVisor) may hide /proc/driver/nvidia while the GPU works: ask the driver's tool.
  if (gpus.length === 0) gpus = (opts.nvidiaSmi ?? gpusFromNvidiaSmi)();
  return { missingProvider, missingCuda, gpus };
}

/** The device for a request, given what the probe found. Throws DeviceError for an explicit cuda that cannot be had. */
export function chooseDevice(req: DeviceRequest, probe: CudaProbe): DeviceChoice {
  if (req.kind === 'cpu') return { kind: 'cpu', index: 0, label: 'cpu', reason: 'requested' };
  const why = cudaMissing(req.index, probe);
  if (why) {
    if (req.kind === 'cuda') throw new DeviceError(`--device cuda${req.index ? `:${req.index}` : ''} cannot be used: ${why}`);
    return { kind: 'cpu', index: 0, label: 'cpu', reason: why };
  }
  const gpu = probe.gpus.find((g) => g.index === req.index)!;
  return {
    kind: 'cuda',
    index: req.index,
    label: `cuda:${req.index} (${gpu.name})`,
    reason: req.kind === 'cuda' ? 'requested' : 'CUDA provider and GPU found',
  };
}

function cudaMissing(index: number, probe: CudaProbe): string | null {
  if (probe.missingProvider.length)
    return `no CUDA provider installed (${probe.missingProvider.join(', ')} missing beside libonnxruntime.so.1 in build/Release)`;
  if (probe.gpus.length === 0) return 'no NVIDIA GPU found (no driver: none in /proc/driver/nvidia/gpus, and nvidia-smi lists none)';
  if (!probe.gpus.some((g) => g.index === index)) return `no GPU cuda:${index} (found ${probe.gpus.map((g) => `cuda:${g.index}`).join(', ')})`;
  if (probe.missingCuda.length) return `CUDA 13 / cuDNN 9 libraries not found: ${probe.missingCuda.join(', ')} (add their folders to LD_LIBRARY_PATH)`;
  return null;
}
