// Piscina worker entry. Module evaluation loads the model (top-level await), so the pool only
// hands this worker tasks once it can run them. Results travel back by transfer, not copy.
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { loadBinding, type SessionOptions } from '../native/binding.js';
import type { RemoveResult, RemoveTask } from '../pool/task.js';
import { runPipeline, type PipelineContext } from './pipeline.js';
import { collectGarbage } from '../process/collect-garbage.js';

export interface WorkerConfig extends SessionOptions {
  modelPath: string;
}

const config = workerData as WorkerConfig;
const binding = loadBinding();
const session = new binding.Session(config.modelPath, config);
const ctx: PipelineContext = { binding, session, model: { width: config.width, height: config.height } };

// A removal leaves its big Buffers behind (the decoded photo alone is 80 MB at 20 MP). V8 would free
// them only once more external memory piled up, so the next removal would run on top of them; and
// Piscina's worker blocks in Atomics.wait between tasks, so nothing scheduled for later runs until
// the next task arrives. So every task ends by collecting its garbage, letting Node run the Buffer
// finalizers (they free sharp's memory on the next turn of the event loop) and handing the freed
// heap pages back to the system: 5 to 25 ms a task (docs/memory.md).
async function releaseMemory(): Promise<void> {
  collectGarbage();
  await new Promise((resolve) => setImmediate(resolve));
  binding.trimMemory();
}

export default async function remove(task: RemoveTask): Promise<unknown> {
  let result: RemoveResult;
  try {
    result = await runPipeline(ctx, task);
  } catch (err) {
    const e = err as Error & { code?: string };
    result = { ok: false, code: 'internal_error', message: `${e.code ? `${e.code}: ` : ''}${e.message}` };
  }
  await releaseMemory();
  if (!result.ok) return result;
  // Transfer the encoded bytes' ArrayBuffer along with the result object.
  const payload = result;
  return move({
    [transferableSymbol]: payload.data.buffer,
    [valueSymbol]: payload,
  } as never);
}

/**
 * Readiness probe: answers once this worker's model is loaded (module evaluation finished), after
 * handing back what loading left behind (module sources, the model file's parse), so an idle
 * server holds only what it needs.
 */
export async function ping(): Promise<{ loadedModels: number; threadId: number }> {
  await releaseMemory();
  return { loadedModels: binding.loadedModels(), threadId: (globalThis as { threadId?: number }).threadId ?? 0 };
}
