// `cutout serve --processes N`: N server processes sharing the port (uWS listens with SO_REUSEPORT
// on Linux) and one LMDB data folder. A process that dies is restarted; the new one's start-up
// reconciliation refunds the dead process's held credits and frees its concurrency slots.
import { fork, type ChildProcess } from 'node:child_process';

export interface SupervisorOptions {
  count: number;
  /** Arguments for each child's `serve` (without --processes). */
  childArgs: string[];
  /** More crashes than this within `crashWindowMs` and the supervisor gives up. */
  maxCrashes?: number;
  crashWindowMs?: number;
  log?: (line: string) => void;
}

export function runSupervisor(opts: SupervisorOptions): Promise<number> {
  const entry = new URL('./main.js', import.meta.url);
  const log = opts.log ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const maxCrashes = opts.maxCrashes ?? 5;
  const windowMs = opts.crashWindowMs ?? 60_000;
  const children = new Map<number, ChildProcess>();
  const crashes: number[] = [];
  let stopping = false;
  let failed = false;

  return new Promise<number>((resolveExit) => {
    const maybeDone = () => {
      if (children.size === 0 && stopping) {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        resolveExit(failed ? 1 : 0);
      }
    };
    const start = (index: number) => {
      const child = fork(entry, ['serve', ...opts.childArgs, '--processes', '1'], {
        env: { ...process.env, CUTOUT_PROCESS_INDEX: String(index) },
      });
      children.set(index, child);
      log(`cutout supervisor: process ${index} started (pid ${child.pid})`);
      child.on('exit', (code, signal) => {
        children.delete(index);
        if (stopping) {
          if (code !== 0) failed = true;
          maybeDone();
          return;
        }
        const now = Date.now();
        crashes.push(now);
        while (crashes.length && crashes[0]! < now - windowMs) crashes.shift();
        log(`cutout supervisor: process ${index} (pid ${child.pid}) exited (${signal ?? `code ${code}`})`);
        if (crashes.length > maxCrashes) {
          log(`cutout supervisor: ${crashes.length} exits within ${windowMs / 1000} s, giving up`);
          failed = true;
          stop('SIGTERM');
          return;
        }
        // The replacement reconciles the dead process's reservations and slots as it starts.
        start(index);
      });
    };
    const stop = (signal: NodeJS.Signals) => {
      stopping = true;
      for (const c of children.values()) if (c.exitCode === null) c.kill(signal);
      maybeDone();
    };
    const onSignal = (signal: NodeJS.Signals) => stop(signal);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    for (let i = 0; i < opts.count; i++) start(i);
  });
}
