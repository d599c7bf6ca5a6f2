// Piscina worker entry for photo work. Module evaluation loads what the worker needs (top-level
// await), so the pool only hands it tasks once it can run them. Results travel back by transfer.
//   mode 'whole':  this worker owns a model session and runs whole removals (`remove`): the CPU path.
//   mode 'stages': no session; `prepare` and `finish` run the two halves around a batched inference
//                  that runs in the inference worker (src/worker/infer-worker.ts): the GPU path.
import os from 'node:os';
import { threadId } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { loadBinding } from '../native/binding.js';
import type { FinishReply, FinishTask, PrepareResult, RemoveFailure, RemoveResult, RemoveTask, WorkerConfig } from '../pool/protocol.js';
import { DECODE_ONCE_MAX_BYTES, finishStaged, prepareRemoval, runPipeline, type PipelineContext } from './pipeline.js';
import { PhotoBuffer } from './photo-buffer.js';
import { AfterAnswerCollection, collectTaskGarbage } from './after-answer-collection.js';
import { finishGarbageBytes, ReleasePolicy } from './release-policy.js';
import { DecodeMemory } from '../process/decode-memory.js';
import { DEFAULT_QUALITY, OVERLAP_DECODE_MAX_BYTES } from '../domain/removal.js';

const config = workerData as WorkerConfig;
// On Linux a nice value belongs to the thread: this worker and the threads it starts from here on
// (ONNX Runtime's, libvips', the addon's) run behind the main thread and the inference workers.
if (config.nice) os.setPriority(config.nice);
const binding = loadBinding();
const ctx: PipelineContext = {
  binding,
  ...(config.mode === 'whole' ? { session: new binding.Session(config.modelPath, config) } : {}),
  model: { width: config.width, height: config.height },
  threads: config.photoThreads,
  quality: config.quality ?? DEFAULT_QUALITY,
  ...(config.decodeMemory ? { decodeMemory: new DecodeMemory(config.decodeMemory) } : {}),
  ...(config.memoryRelease === 'every-task' ? { lean: true } : {}),
  // The CPU path's photos decoded once (up to the larger of the two single-decode bounds) decode into
  // kept memory, and their model input is resized into kept memory (3 MB at 1024²: from malloc's heap,
  // faulted in again whenever the heap's top was trimmed); not where memory goes back after every task.
  ...(config.mode === 'whole' && config.memoryRelease !== 'every-task'
    ? {
        photoBuffer: new PhotoBuffer(Math.max(OVERLAP_DECODE_MAX_BYTES, DECODE_ONCE_MAX_BYTES)),
        modelInputBuffer: new PhotoBuffer(config.width * config.height * 3),
      }
    : {}),
};

/** The worker's context for one task: its photo passes on the threads the pool gave it, and its own big-decode mark. */
function contextFor(task: { threads?: number }): PipelineContext {
  return { ...ctx, threads: task.threads ?? ctx.threads, bigDecode: { made: false } };
}

// The CPU path collects a removal's garbage after its answer; the next task waits for that first.
const afterAnswer = new AfterAnswerCollection();

// Everything back to the system: the kept photo memory, the garbage, the session's input and output
// tensors, the addon's block cache (ONNX Runtime's tensors and the composite's scratch: process-wide,
// so any worker's call hands back every worker's free blocks) and malloc's free pages. Once the pool has been idle a while (src/pool/idle-release.ts), or after every
// task with memoryRelease 'every-task'. 5 to 40 ms.
async function releaseMemory(): Promise<void> {
  ctx.photoBuffer?.drop();
  ctx.modelInputBuffer?.drop();
  await collectTaskGarbage();
  ctx.session?.releaseTensors();
  binding.releaseScratch();
  binding.trimMemory();
}

const releaseEveryTask = config.memoryRelease === 'every-task';

const finishReleases = new ReleasePolicy();

/** After a staged finish that left `garbage` bytes: collected once enough piled up, or everything handed back. */
async function afterFinish(garbage: number): Promise<void> {
  if (releaseEveryTask) await releaseMemory();
  else if (finishReleases.afterTask(garbage)) await collectTaskGarbage();
}

/**
 * The task's decodes are over: its share of the decode memory goes back. A task whose decode held its
 * source whole (its context's `bigDecode`, pipeline.ts's holdsSourceWhole: a decompression bomb at preview)
 * first hands what it left in malloc's heaps back to the system, as the share's accounting assumes:
 * kept, it would sit beside the next photo's decode (20 bombs through one worker: 800 MB peak
 * instead of 540). An ordinary photo's buffers stay for the next one.
 */
async function releaseDecodeMemory(taskCtx: PipelineContext, slot: number | undefined): Promise<void> {
  if (taskCtx.bigDecode?.made) {
    await collectTaskGarbage();
    binding.trimMemory();
  }
  if (slot !== undefined) ctx.decodeMemory?.release(slot);
}

function asFailure(err: unknown): RemoveResult {
  const e = err as Error & { code?: string };
  return { ok: false, code: 'internal_error', message: `${e.code ? `${e.code}: ` : ''}${e.message}` };
}

/** `value` as Piscina's answer, with `buffers` transferred to the pool's thread rather than copied. */
function withTransfer(value: unknown, buffers: ArrayBufferLike[]): unknown {
  return move({ [transferableSymbol]: buffers, [valueSymbol]: value } as never);
}

/** Hand a result back with its bytes transferred, not copied. */
function moveResult(result: RemoveResult): unknown {
  return result.ok ? withTransfer(result, [result.data.buffer]) : result;
}

export default async function remove(task: RemoveTask): Promise<unknown> {
  await afterAnswer.done();
  const c = contextFor(task);
  let result: RemoveResult;
  try {
    result = await runPipeline(c, task);
  } catch (err) {
    result = asFailure(err);
  }
  // memoryRelease 'every-task': everything handed back before the answer (the footprint it promises);
  // otherwise the garbage is collected once the answer has gone.
  if (releaseEveryTask) await releaseMemory();
  await releaseDecodeMemory(c, task.decodeSlot);
  if (!releaseEveryTask) afterAnswer.schedule();
  return moveResult(result);
}

/** Stage 1 of the staged path: the plan and the model-sized input; the input bytes go back too, and the task's photo memory where the photo did not go into it. */
export async function prepare(task: RemoveTask): Promise<unknown> {
  const c = contextFor(task);
  let result: PrepareResult;
  try {
    result = await prepareRemoval(c, task);
  } catch (err) {
    result = asFailure(err) as RemoveFailure;
  }
  // Only the 1024² input is kept; a decode that held much of its source hands it back before the
  // decode memory is, so the next photo's share is really free.
  await releaseDecodeMemory(c, task.decodeSlot);
  if (!result.ok) return result;
  const buffers = [
    result.modelInput.buffer,
    result.input.buffer,
    ...(result.photo ? [result.photo.buffer] : []),
    ...(result.unusedMemory ? [result.unusedMemory] : []),
  ];
  return withTransfer(result, buffers);
}

/**
 * Stage 2 of the staged path. The mask's buffer goes back with the answer (FinishReply), for the pool
 * to hand to the next batch: the inference worker then fills pages that are resident instead of
 * faulting in a fresh 4 MiB per photo (docs/gpu.md, "Page faults on the staged path"). The photo's
 * buffer too, for the next `prepare` to decode a plain photo into.
 */
export async function finish(task: FinishTask): Promise<unknown> {
  const c = contextFor(task);
  let result: RemoveResult;
  try {
    result = await finishStaged(c, task);
  } catch (err) {
    result = asFailure(err);
  }
  // Only after a removal that went through: a failure may have left a pass over the mask unfinished.
  const spareMask = result.ok && task.mask.buffer.byteLength > 0 ? (task.mask.buffer as ArrayBuffer) : undefined;
  // Stage 1's photo likewise, for the next `prepare` to decode into (src/pool/spare-photos.ts).
  const photoBuffer = task.photo?.buffer;
  const sparePhoto =
    result.ok && photoBuffer instanceof ArrayBuffer && photoBuffer.byteLength > 0 && photoBuffer !== result.data.buffer ? photoBuffer : undefined;
  // The garbage waits for a few photos' worth (release-policy.ts); the memory for the pool's idle `release`.
  await afterFinish(finishGarbageBytes(task.plan, spareMask ? 0 : task.mask.byteLength));
  await releaseDecodeMemory(c, task.decodeSlot);
  const reply: FinishReply = { result, ...(spareMask ? { spareMask } : {}), ...(sparePhoto ? { sparePhoto } : {}) };
  const buffers = [...(result.ok ? [result.data.buffer] : []), ...(spareMask ? [spareMask] : []), ...(sparePhoto ? [sparePhoto] : [])];
  return withTransfer(reply, buffers);
}

/**
 * The pool has been idle for a while (src/pool/idle-release.ts): everything back to the system.
 * Returns the garbage that was still waiting for collection, in bytes (estimated).
 */
export async function release(): Promise<number> {
  const deferred = finishReleases.deferred;
  finishReleases.whenIdle();
  await releaseMemory();
  return deferred;
}

/**
 * Readiness probe: answers once this worker's model is loaded (module evaluation finished), after
 * handing back what loading left behind (module sources, the model file's parse), so an idle
 * server holds only what it needs.
 */
export async function ping(): Promise<{ loadedModels: number; threadId: number }> {
  await releaseMemory();
  return { loadedModels: binding.loadedModels(), threadId };
}
