// A full V8 garbage collection on demand, in whichever thread calls it. Node hides `gc()` unless it
// starts with --expose-gc; setting the flag at run time and taking the function from a fresh context
// gives the same function without a command-line flag (a CLI and a library cannot pass one).
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
// The ArrayBuffers a GC finds dead are freed in its own pause, not by a helper thread after it (V8's
// default, process-wide): with the helper, ~1 collection in 25 had not yet freed a dead 64 MB photo
// Buffer a turn of the event loop later (10–100 turns more), so the next task decoded on top of it
// (test/unit/after-answer-collection.test.ts). The app holds few ArrayBuffers: the pause barely grows.
v8.setFlagsFromString('--no-concurrent-array-buffer-sweeping');
const gc = vm.runInNewContext('gc') as () => void;

/** Collect this thread's garbage now (major GC); the dead ArrayBuffers' memory is freed by its end (sharp's: on the next turn of the event loop, by their finalizers). */
export function collectGarbage(): void {
  gc();
}
