// Piscina worker entry. Module evaluation loads the model (top-level await), so the pool only
// hands this worker tasks once it can run them. Results travel back by transfer, not copy.
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { loadBinding, type SessionOptions } from '../native/binding.js';
import type { RemoveResult, RemoveTask } from '../pool/task.js';
import { runPipeline, type PipelineContext } from './pipeline.js';

export interface WorkerConfig extends SessionOptions {
  modelPath: string;
}

const config = workerData as WorkerConfig;
const binding = loadBinding();
const session = new binding.Session(config.modelPath, config);
const ctx: PipelineContext = { binding, session, model: { width: config.width, height: config.height } };

export default async function remove(task: RemoveTask): Promise<unknown> {
  let result: RemoveResult;
  try {
    result = await runPipeline(ctx, task);
  } catch (err) {
    const e = err as Error & { code?: string };
    result = { ok: false, code: 'internal_error', message: `${e.code ? `${e.code}: ` : ''}${e.message}` };
  }
  if (!result.ok) return result;
  // Transfer the encoded bytes' ArrayBuffer along with the result object.
  const payload = result;
  return move({
    [transferableSymbol]: payload.data.buffer,
    [valueSymbol]: payload,
  } as never);
}

/** Readiness probe: answers once this worker's model is loaded (module evaluation finished). */
export function ping(): { loadedModels: number; threadId: number } {
  return { loadedModels: binding.loadedModels(), threadId: (globalThis as { threadId?: number }).threadId ?? 0 };
}
