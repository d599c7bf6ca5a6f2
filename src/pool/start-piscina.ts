// One Piscina pool of identical workers, started and checked: every worker answers a ping (module
// evaluation, i.e. loading the model, has finished) before this resolves. A worker that fails while
// starting makes Piscina emit 'error' instead of failing the queued ping (no task was on it yet), and
// an 'error' nobody listens to would crash the process: so the first one fails the start, and later
// ones (a worker dying between tasks; Piscina starts a new one) are reported on stderr.
import { Piscina } from 'piscina';
import { codedError } from './fifo-queue.js';

export interface PiscinaSpec {
  /** Worker module, relative to this file. */
  filename: string;
  threads: number;
  workerData: unknown;
  resourceLimits?: { maxYoungGenerationSizeMb?: number };
}

export async function startPiscina(spec: PiscinaSpec): Promise<Piscina> {
  const piscina = new Piscina({
    filename: new URL(spec.filename, import.meta.url).href,
    minThreads: spec.threads,
    maxThreads: spec.threads,
    // Workers hold the model: never let them idle out.
    idleTimeout: Number.MAX_SAFE_INTEGER,
    concurrentTasksPerWorker: 1,
    // Between tasks a worker idles in its event loop rather than blocked in Atomics.wait: the work a
    // task leaves for after its answer (the CPU path's garbage collection, src/worker/worker.ts) runs
    // then, instead of holding the answer back.
    atomics: 'disabled',
    workerData: spec.workerData,
    // libuv's pool is process-wide and shared by every worker's sharp calls.
    env: process.env,
    ...(spec.resourceLimits ? { resourceLimits: spec.resourceLimits } : {}),
  });
  let failStart: ((err: Error) => void) | undefined;
  const failed = new Promise<never>((_, reject) => (failStart = reject));
  failed.catch(() => undefined);
  let started = false;
  piscina.on('error', (err: Error) => {
    if (!started) failStart?.(err);
    else process.stderr.write(`cutout: a worker of ${spec.filename} failed outside a task: ${err.message}\n`);
  });
  try {
    // One ping per worker: Piscina posts each to an idle worker, loaded or still loading (all N exist
    // from the start), and each takes one task at a time, so N concurrent pings resolve only once N
    // workers have loaded (test/unit/start-piscina.test.ts, with workers that load unevenly).
    await Promise.race([Promise.all(Array.from({ length: spec.threads }, () => piscina.run(null, { name: 'ping' }))), failed]);
  } catch (err) {
    await piscina.destroy();
    throw codedError('ERR_CUTOUT_POOL_START', `Worker pool failed to start: ${(err as Error).message}`);
  }
  started = true;
  return piscina;
}
