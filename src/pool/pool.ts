// The removal pool: picks the device and the model, sizes the workers from the cores, and starts
// the pool that fits the model: whole removals per worker (CPU models), or the staged pipeline with
// inference batched across requests (batch models, the CUDA default).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chooseDevice, probeCuda, type DeviceChoice } from '../device/device.js';
import { parseDevice, type DeviceRequest } from '../domain/device-request.js';
import { ADDON_PATH } from '../native/addon-path.js';
import { modelEntry, sessionOptionsFor } from '../model/manifest.js';
import { hashFileFor, verifyModelFile } from '../model/assemble.js';
import { checkModelFile, ModelFileError, sessionOptionsForFile, type ModelFile } from '../model/families.js';
import type { PoolInfo, PoolOptions, RemovalPool } from './pool-api.js';
import { createStagedPool } from './staged-pool.js';
import { createWholePool } from './whole-pool.js';
import { fitToMemory, MemoryLimitError } from './memory-fit.js';
import { DEFAULT_MEMORY_RELEASE } from '../domain/memory-release.js';
import type { ModelFileSize } from './memory-estimate.js';

export type { PoolOptions, RemovalPool } from './pool-api.js';

/** Waiting removals per pool before 503: about a minute of work on one worker. */
export const DEFAULT_MAX_QUEUE = 64;
/**
 * Photos per inference batch. On an H100 (NOTES-ENV, "GPU"): 112 images/s at batch 1, 178 at 8,
 * 191 at 32; 8 takes most of the gain at a quarter of 32's wait to fill and memory.
 */
export const DEFAULT_MAX_BATCH = 8;
/**
 * How long a free inference worker waits for a batch to fill. Under load batches fill while the
 * GPU is busy anyway; alone, a photo waits this long for company, so it stays small.
 */
export const DEFAULT_BATCH_WAIT_MS = 2;
/**
 * Inference workers of the staged path (they share one model session). One: on the H200 (docs/gpu.md)
 * two workers running batches on the shared session at once made each batch of 8 take
 * 86–319 ms (median) instead of 58–64, and 1 MP at c = 128 went 73 → 99.6 images/s with one.
 */
export const INFER_WORKERS = 1;

/** The CPU path: one worker per 2 cores, each with the rest of the cores as ONNX Runtime threads. */
export function defaultSizing(cores = os.availableParallelism()): { workers: number; threadsPerWorker: number } {
  const workers = Math.max(1, Math.floor(cores / 2));
  return { workers, threadsPerWorker: Math.max(1, Math.floor(cores / workers)) };
}

export async function createRemovalPool(opts: PoolOptions = {}): Promise<RemovalPool> {
  const request: DeviceRequest = typeof opts.device === 'object' ? opts.device : parseDevice(opts.device);
  const device = chooseDevice(request, opts.probe ?? probeCuda({ libDir: path.dirname(ADDON_PATH) }));
  try {
    return await startPool(opts, device);
  } catch (err) {
    // `auto` found the provider and a GPU, but the provider would not load (a driver or library the
    // file probe cannot judge): the CPU, saying why. An explicit `cuda` stops instead.
    const message = (err as Error).message;
    if (request.kind !== 'auto' || device.kind !== 'cuda' || !/CUDA execution provider/.test(message)) throw err;
    const reason = `the CUDA provider failed to load: ${message.replace(/^Worker pool failed to start: /, '')}`;
    return startPool(opts, { kind: 'cpu', index: 0, label: 'cpu', reason });
  }
}

/** A model file of the user's own, checked against its family before any worker starts; undefined without one. */
function checkedModelFile(opts: PoolOptions): ModelFile | undefined {
  if (opts.modelFile === undefined) {
    if (opts.modelFamily !== undefined || opts.modelDescriptor !== undefined) {
      throw new ModelFileError('--model-family and --model-descriptor describe a model file: give --model-file too');
    }
    return undefined;
  }
  if (opts.model !== undefined) {
    throw new ModelFileError(`--model ${opts.model} and --model-file ${opts.modelFile} name two models: give one`);
  }
  if (opts.modelPath !== undefined) throw new ModelFileError('modelPath and modelFile name two model files: give one');
  return checkModelFile({ file: opts.modelFile, family: opts.modelFamily, descriptor: opts.modelDescriptor });
}

/** A bundled model's sha256: the manifest's, else the one recorded at assembly. */
function bundledSha256(entry: { sha256: string | null }, file: string): string | undefined {
  if (entry.sha256) return entry.sha256;
  try {
    return fs.readFileSync(hashFileFor(file), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

async function startPool(opts: PoolOptions, device: DeviceChoice): Promise<RemovalPool> {
  const file = checkedModelFile(opts);
  return file ? startFilePool(opts, device, file) : startNamedPool(opts, device);
}

/**
 * A file of the user's own, with its family's pre- and post-processing: on the staged, batching path
 * when its batch dimension is symbolic and batching is on (PoolOptions.fileBatching: default on CUDA),
 * the inference workers normalising each photo into its batch slot; else one photo per run on the
 * whole-removal path.
 */
function startFilePool(opts: PoolOptions, device: DeviceChoice, file: ModelFile): Promise<RemovalPool> {
  return startPoolWith(opts, device, {
    name: path.basename(file.path),
    family: file.family,
    sha256: file.sha256,
    own: true,
    path: file.path,
    batch: file.batch === 'symbolic' && (opts.fileBatching ?? device.kind === 'cuda'),
    fileBatch: file.batch,
    float16WeightBytes: file.float16WeightBytes,
    ...(file.warnings.length ? { warnings: file.warnings } : {}),
    session: (threads) => sessionOptionsForFile(file, threads),
  });
}

function startNamedPool(opts: PoolOptions, device: DeviceChoice): Promise<RemovalPool> {
  const model = modelEntry(opts.model, device.kind);
  const modelPath = opts.modelPath ?? model.path;
  if (!opts.modelPath && model.entry.sha256) verifyModelFile(modelPath, model.entry.sha256);
  const sha256 = opts.modelPath ? undefined : bundledSha256(model.entry, modelPath);
  return startPoolWith(opts, device, {
    name: opts.modelPath ? path.basename(opts.modelPath) : model.name,
    family: 'isnet',
    ...(sha256 ? { sha256 } : {}),
    path: modelPath,
    batch: model.entry.batch === true,
    session: (threads) => sessionOptionsFor(model.entry, threads),
  });
}

interface ChosenModel {
  name: string;
  family: string;
  sha256?: string;
  /** A model file of the user's own. */
  own?: boolean;
  /** Its fp16 weights' bytes, for the memory estimate. */
  float16WeightBytes?: number;
  /** A model file's batch dimension (families.ts). */
  fileBatch?: 'symbolic' | 'fixed';
  /** Signs that a model file is of another family than the one given (families.ts familyWarnings). */
  warnings?: string[];
  path: string;
  batch: boolean;
  session: (threads: number) => ReturnType<typeof sessionOptionsFor>;
}

async function startPoolWith(opts: PoolOptions, device: DeviceChoice, chosen: ChosenModel): Promise<RemovalPool> {
  const cores = os.availableParallelism();
  const modelPath = chosen.path;
  // A file of one's own has no measured memory figures: its estimate comes from its size and input.
  const input = chosen.session(1);
  const modelFileSize: ModelFileSize | undefined = chosen.own
    ? {
        name: chosen.name,
        fileBytes: fs.statSync(modelPath).size,
        inputWidth: input.width,
        inputHeight: input.height,
        ...(chosen.float16WeightBytes ? { float16WeightBytes: chosen.float16WeightBytes } : {}),
      }
    : undefined;
  const modelFacts = {
    modelFamily: chosen.family,
    ...(chosen.sha256 ? { modelSha256: chosen.sha256 } : {}),
    ...(chosen.own ? { ownModelFile: true } : {}),
    ...(modelFileSize ? { modelFileSize } : {}),
    ...(chosen.fileBatch ? { modelBatch: chosen.fileBatch } : {}),
    ...(chosen.warnings ? { modelWarnings: chosen.warnings } : {}),
  };
  const maxQueue = opts.maxQueue ?? DEFAULT_MAX_QUEUE;
  const cudaOptions = opts.cudaOptions ?? process.env.CUTOUT_CUDA_OPTIONS;
  const onDevice = { device: device.kind, deviceId: device.index, ...(cudaOptions ? { cudaOptions } : {}) };
  const modelName = chosen.name;
  // What every photo worker takes, on either path: the default quality level, its nice value and
  // when it hands its memory back.
  const photoWork = {
    ...(opts.quality ? { quality: opts.quality } : {}),
    ...(opts.photoNice ? { nice: opts.photoNice } : {}),
    ...(opts.memoryRelease ? { memoryRelease: opts.memoryRelease } : {}),
  };

  if (chosen.batch) {
    // Photo work on every core (one thread each: under load the cores are taken by other photos);
    // inference on INFER_WORKERS threads over one shared session.
    const inferWorkers = opts.inferWorkers ?? INFER_WORKERS;
    const cpuWorkers = opts.workers ?? cores;
    const photoThreads = Math.max(1, Math.floor(cores / cpuWorkers));
    // ONNX Runtime threads run only the nodes left on the CPU when a GPU runs the model.
    const inferThreads = opts.threadsPerWorker ?? (device.kind === 'cuda' ? 1 : Math.max(1, Math.floor(cores / inferWorkers)));
    const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH;
    const maxWaitMs = opts.batchWaitMs ?? DEFAULT_BATCH_WAIT_MS;
    const session = { ...chosen.session(inferThreads), ...onDevice };
    const info: PoolInfo = {
      device,
      model: modelName,
      ...modelFacts,
      workers: cpuWorkers,
      threadsPerWorker: photoThreads,
      batching: { maxBatch, maxWaitMs, inferWorkers },
      memoryRelease: opts.memoryRelease ?? DEFAULT_MEMORY_RELEASE,
    };
    return createStagedPool({
      info,
      worker: { ...session, mode: 'stages', modelPath, photoThreads, ...photoWork },
      cpuWorkers,
      infer: { ...session, modelPath, maxBatch, ...(opts.warmUp === false ? { warmUp: false } : {}) },
      inferWorkers,
      maxBatch,
      maxWaitMs,
      maxQueue,
      cores,
      ...(opts.lowPriorityPlaces !== undefined && { lowPriorityPlaces: opts.lowPriorityPlaces }),
      ...(opts.onBatch && { onBatch: opts.onBatch }),
    });
  }

  const sizing = defaultSizing(cores);
  let workers = opts.workers ?? sizing.workers;
  let memoryRelease = opts.memoryRelease ?? DEFAULT_MEMORY_RELEASE;
  let memoryFit: string | undefined;
  let decodeCeilingBytes: number | undefined;
  let inputCeilingBytes: number | undefined;
  if (opts.memoryLimit) {
    const fit = fitToMemory({
      model: modelFileSize ?? modelName,
      workers,
      workersGiven: opts.workers !== undefined,
      release: memoryRelease,
      releaseGiven: opts.memoryRelease !== undefined,
      limit: opts.memoryLimit,
      ...(opts.inputs && { inputs: opts.inputs }),
    });
    if (!fit.ok) throw new MemoryLimitError(fit.message);
    ({ workers, release: memoryRelease, changed: memoryFit, decodeCeilingBytes } = fit);
    if (opts.inputs) inputCeilingBytes = fit.inputCeilingBytes;
  }
  const threads = opts.threadsPerWorker ?? Math.max(1, Math.floor(cores / workers));
  const info: PoolInfo = {
    device,
    model: modelName,
    ...modelFacts,
    workers,
    threadsPerWorker: threads,
    memoryRelease,
    ...(memoryFit ? { memoryFit } : {}),
    ...(inputCeilingBytes !== undefined && { inputCeilingBytes }),
  };
  return createWholePool({
    info,
    // ORT's threads idle while the photo is composited and encoded: those passes take them.
    worker: { ...chosen.session(threads), ...onDevice, mode: 'whole', modelPath, photoThreads: threads, ...photoWork, memoryRelease },
    workers,
    maxQueue,
    cores,
    ...(opts.lowPriorityPlaces !== undefined && { lowPriorityPlaces: opts.lowPriorityPlaces }),
    ...(decodeCeilingBytes !== undefined && { decodeCeilingBytes }),
  });
}
