// Piscina worker entry for batched inference (the staged path): one BatchSession over the shared
// model, run on whole batches of model-sized photos. Module evaluation loads the model and runs
// every batch size once (cuDNN tunes its kernels per shape), so the pool is ready only when a
// batch of any size runs at full speed. Masks travel back by transfer, one ArrayBuffer each; the
// pool hands finished photos' masks back with the next batch, to be filled again (no fresh pages).
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { loadBinding } from '../native/binding.js';
import type { InferBatch, InferBatchResult, InferWorkerConfig } from '../pool/protocol.js';

const config = workerData as InferWorkerConfig;
const binding = loadBinding();
const session = new binding.BatchSession(config.modelPath, config);
const warmUpMs = config.warmUp === false ? [] : session.warmUp();

export default function inferBatch(task: InferBatch): unknown {
  const t0 = performance.now();
  const masks = session.run(task.images, task.outputs);
  const result: InferBatchResult = {
    masks,
    ms: Math.round((performance.now() - t0) * 10) / 10,
    batch: session.buckets.find((b) => b >= task.images.length) ?? task.images.length,
    reused: Math.min(task.outputs?.length ?? 0, task.images.length),
  };
  return move({ [transferableSymbol]: masks.map((m) => m.buffer), [valueSymbol]: result } as never);
}

/** Readiness probe, with what the start measured. */
export function ping(): { buckets: number[]; warmUpMs: number[]; pinned: boolean; pinnedError: string | null } {
  return { buckets: session.buckets, warmUpMs, pinned: session.pinned, pinnedError: session.pinnedError };
}
