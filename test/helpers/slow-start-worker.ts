// A Piscina worker for start-piscina.test.ts: its module evaluation (what loading a model is for the
// real workers) takes `delays[n]` ms for the n-th worker to start, then counts itself loaded in a
// shared counter. `ping` answers with its thread id.
import { threadId } from 'node:worker_threads';
import { workerData } from 'piscina';

const { loaded, delays } = workerData as { loaded: Int32Array; delays: number[] };
const order = Atomics.add(loaded, 1, 1); // the order this worker started in
await new Promise((r) => setTimeout(r, delays[order % delays.length]));
Atomics.add(loaded, 0, 1);

export function ping(): { threadId: number } {
  return { threadId };
}
