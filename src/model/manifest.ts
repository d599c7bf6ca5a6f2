// Reads models/manifest.json: which model files exist, where they come from and how to check them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ModelSource {
  package: string;
  version: string;
  resources: string;
  key: string;
  bytes: number;
  sha256: string;
}

/** The terms of a model's weights and of the package they are taken from, as their upstreams state them. */
export interface ModelLicense {
  /** The weights' licence (SPDX id), as the package that ships them lists it. */
  weights: string;
  /** Where the weights were published (the model's own project). */
  weightsSource: string;
  /** The file that states the weights' licence. */
  weightsStatedIn: string;
  /** The licence of the package the weights are taken from (SPDX id). */
  package: string;
  packageStatedIn: string;
  /** What of that package cutout uses. */
  packageUse: string;
}

export interface ModelEntry {
  description: string;
  source: ModelSource;
  license: ModelLicense;
  transforms: string[];
  file: string;
  /** sha256 of the assembled file; null when it is produced by a transform and recorded at assembly. */
  sha256: string | null;
  input: {
    name: string;
    /** 'nchw-f32' (default): the addon normalises into a float tensor; 'nhwc-u8': the graph takes the RGB bytes and normalises itself. */
    layout?: 'nchw-f32' | 'nhwc-u8';
    width: number;
    height: number;
    mean: [number, number, number];
    std: [number, number, number];
  };
  output: string;
  /** Optional models are assembled only on request (`npm run model -- --all`). */
  optional?: boolean;
  /** A symbolic batch dimension and uint8 input: runs on the staged, batching path (src/pool/staged-pool.ts). */
  batch?: boolean;
}

export interface Manifest {
  /** The CPU's model. */
  default: string;
  /** The model a CUDA device runs unless one is named. */
  defaultCuda: string;
  models: Record<string, ModelEntry>;
}

/** The repository root, found from this file's place in dist/src/model/ or src/model/. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), resolveUp());

function resolveUp(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return here.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..';
}

export const MODELS_DIR = path.join(PACKAGE_ROOT, 'models');

export function readManifest(): Manifest {
  return JSON.parse(fs.readFileSync(path.join(MODELS_DIR, 'manifest.json'), 'utf8')) as Manifest;
}

/** A named model, or the default one for the device (`cuda` → the manifest's defaultCuda). */
export function modelEntry(name?: string, device: 'cpu' | 'cuda' = 'cpu'): { name: string; entry: ModelEntry; path: string } {
  const manifest = readManifest();
  const key = name ?? (device === 'cuda' ? manifest.defaultCuda : manifest.default);
  const entry = manifest.models[key];
  if (!entry) throw new Error(`Unknown model '${key}'; models/manifest.json lists ${Object.keys(manifest.models).join(', ')}`);
  return { name: key, entry, path: path.join(MODELS_DIR, entry.file) };
}

/** The manifest's licence facts for a model name; undefined for a name it does not list (a model file of the user's own). */
export function modelLicense(name: string): ModelLicense | undefined {
  return readManifest().models[name]?.license;
}

/** One line on a model's terms, for `cutout serve`'s start-up (the README's "Licences" says the same). */
export function describeModelLicense(name: string, ownFile = false): string {
  const lic = ownFile ? undefined : modelLicense(name);
  if (!lic) return `model ${name}: a file of your own; its terms are yours to check`;
  const { source } = readManifest().models[name]!;
  return (
    `model ${name}: weights ${lic.weights} (${lic.weightsSource}), as listed by ${source.package}@${source.version}, whose data files they are taken from; ` +
    `that package is ${lic.package}, and none of its code is used (README, "Licences")`
  );
}

/** The element types a model's input and output tensors may have. */
export type TensorType = 'float32' | 'float16';

/** Options of the addon's Session (declared here so the main thread needs no addon import). */
export interface SessionOptions {
  threads: number;
  inputName: string;
  outputName: string;
  width: number;
  height: number;
  mean: [number, number, number];
  std: [number, number, number];
  /** The output's activation and range (src/model/families.ts; native/src/postprocess.h). Default 'none' and 'unit'. */
  activation?: 'none' | 'sigmoid';
  range?: 'unit' | 'minmax';
  /** 4 (default): the output is [1, 1, H, W]; 3: [1, H, W]. */
  outputRank?: 3 | 4;
  /** The input tensor: 'nchw' (default) [1, 3, H, W], or 'nhwc' [1, H, W, 3]. */
  layout?: 'nchw' | 'nhwc';
  /** The element type of the file's input and output tensors: 'float32' (default) or 'float16' (native/src/half.h). */
  inputType?: TensorType;
  outputType?: TensorType;
  /** Execution provider: the CPU (default) or CUDA GPU `deviceId`. */
  device?: 'cpu' | 'cuda';
  deviceId?: number;
  /** CUDA provider options over ours, "key=value;key=value" (CUTOUT_CUDA_OPTIONS; native/src/cuda_provider.cc). */
  cudaOptions?: string;
  /** ONNX Runtime's memory pattern (default false: it costs memory and gains ~1% here; docs/memory.md). */
  memoryPattern?: boolean;
}

/** Options of a BatchSession: a Session's model options plus the largest batch. */
export interface BatchSessionOptions extends SessionOptions {
  maxBatch: number;
  /** Page-locked host buffers from the CUDA provider (default true; ignored on the CPU). */
  pinned?: boolean;
}

/** The addon's Session options for a model entry. */
export function sessionOptionsFor(entry: ModelEntry, threads: number): SessionOptions {
  const { name, width, height, mean, std } = entry.input;
  return { threads, inputName: name, outputName: entry.output, width, height, mean, std };
}
