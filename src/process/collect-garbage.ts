// A full V8 garbage collection on demand, in whichever thread calls it. Node hides `gc()` unless it
// starts with --expose-gc; setting the flag at run time and taking the function from a fresh context
// gives the same function without a command-line flag (a CLI and a library cannot pass one).
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Collect this thread's garbage now (major GC). */
export function collectGarbage(): void {
  gc();
}
