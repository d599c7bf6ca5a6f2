// `cutout serve --processes N`: N server processes sharing the port (uWS listens with SO_REUSEPORT
// on Linux) and one LMDB data folder. A process that dies is restarted after a back-off that doubles
// with each of its recent crashes; one that keeps crashing is given up while the others keep
// serving. After every crash the live processes are asked to reconcile the ledger, so the dead
// one's held credits and concurrency slots come back without waiting for its replacement.
// Signals: the first is forwarded (each process drains); a second kills them all at once.
import { fork, type ChildProcess } from 'node:child_process';
import type { GroupHub } from './group-hub.js';

export interface SupervisorOptions {
  count: number;
  /** Arguments for each child's `serve` (without --processes). */
  childArgs: string[];
  /**
   * Module each process runs, given `childArgs` as they are; default the cutout CLI (`serve … --processes 1`).
   * runServeCommand passes its caller's childEntry; tests pass a stand-in.
   */
  entry?: URL;
  /** A process that exits more than this many times within `crashWindowMs` is given up (default 5 in 60 s). */
  maxCrashes?: number;
  crashWindowMs?: number;
  /** Delay before restarting after a first crash; doubles per crash within the window (default 1 s). */
  restartDelayMs?: number;
  /** Longest delay before a restart (default 30 s). */
  maxRestartDelayMs?: number;
  /** Progress lines (default stdout). */
  log?: (line: string) => void;
  /** Crashes, give-ups, forced stops (default stderr). */
  warn?: (line: string) => void;
  /** What the processes share through their supervisor (the sandbox window, the metrics): told of each start and exit. */
  hub?: GroupHub;
}

/** The message a supervisor sends its live processes after one of them died. */
export const RECONCILE_MESSAGE = Object.freeze({ type: 'cutout:reconcile' });

interface Slot {
  index: number;
  child: ChildProcess | null;
  /** Exit times within the crash window. */
  crashes: number[];
  restart: ReturnType<typeof setTimeout> | null;
  givenUp: boolean;
}

/** Restart delay after the `n`-th crash within the window: base · 2^(n-1), capped. */
export function restartDelay(n: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(n - 1, 30)));
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

export function runSupervisor(opts: SupervisorOptions): Promise<number> {
  const custom = opts.entry !== undefined;
  const entry = opts.entry ?? new URL('./main.js', import.meta.url);
  const args = custom ? opts.childArgs : ['serve', ...opts.childArgs, '--processes', '1'];
  const log = opts.log ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const warn = opts.warn ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const maxCrashes = opts.maxCrashes ?? 5;
  const windowMs = opts.crashWindowMs ?? 60_000;
  const baseDelayMs = opts.restartDelayMs ?? 1_000;
  const maxDelayMs = opts.maxRestartDelayMs ?? 30_000;
  const slots: Slot[] = Array.from({ length: opts.count }, (_, index) => ({ index, child: null, crashes: [], restart: null, givenUp: false }));
  let signals = 0;
  let exitCode = 0;

  return new Promise<number>((resolveExit) => {
    const live = () => slots.filter((s) => s.child !== null);
    const serving = () => slots.filter((s) => !s.givenUp).length;
    const maybeDone = () => {
      if (signals === 0 && serving() > 0) return;
      if (live().length > 0 || slots.some((s) => s.restart)) return;
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      opts.hub?.close();
      resolveExit(exitCode);
    };

    const start = (slot: Slot) => {
      slot.restart = null;
      const child = fork(entry, args, { env: { ...process.env, CUTOUT_PROCESS_INDEX: String(slot.index), CUTOUT_PROCESS_COUNT: String(opts.count) } });
      slot.child = child;
      opts.hub?.join(slot.index, child);
      log(`cutout supervisor: process ${slot.index} started (pid ${child.pid})`);
      child.on('exit', (code, signal) => onExit(slot, child, code, signal));
    };

    const onExit = (slot: Slot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) => {
      slot.child = null;
      opts.hub?.leave(slot.index);
      if (signals > 0) {
        if (code !== 0 && exitCode === 0) exitCode = 1;
        maybeDone();
        return;
      }
      const now = Date.now();
      slot.crashes.push(now);
      while (slot.crashes.length && slot.crashes[0]! <= now - windowMs) slot.crashes.shift();
      const n = slot.crashes.length;
      warn(`cutout supervisor: process ${slot.index} (pid ${child.pid}) exited (${signal ?? `code ${code}`}); crash ${n} within ${seconds(windowMs)}`);
      // The dead process's holds and slots: refunded by whichever process is alive now.
      for (const s of live()) s.child!.send(RECONCILE_MESSAGE, () => {});
      if (n > maxCrashes) {
        slot.givenUp = true;
        warn(
          `cutout supervisor: process ${slot.index} crashed ${n} times within ${seconds(windowMs)}; giving up on it (${serving()} of ${opts.count} processes still serving)`,
        );
        if (serving() === 0) {
          warn('cutout supervisor: every process was given up; exiting');
          exitCode = 1;
          stop('SIGTERM');
        }
        return;
      }
      const delay = restartDelay(n, baseDelayMs, maxDelayMs);
      log(`cutout supervisor: restarting process ${slot.index} in ${seconds(delay)}`);
      slot.restart = setTimeout(() => start(slot), delay);
    };

    const stop = (signal: NodeJS.Signals) => {
      signals++;
      for (const s of slots) {
        if (s.restart) clearTimeout(s.restart);
        s.restart = null;
      }
      if (signals === 1) {
        for (const s of live()) s.child!.kill(signal);
      } else {
        // The processes ignore a second signal of their own (Ctrl-C and systemd signal the whole
        // group): this is the one that ends them. The next start refunds what they held.
        warn(`cutout supervisor: second ${signal}, killing ${live().length} process(es) now`);
        exitCode = 130;
        for (const s of live()) s.child!.kill('SIGKILL');
      }
      maybeDone();
    };
    const onSignal = (signal: NodeJS.Signals) => stop(signal);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    for (const slot of slots) start(slot);
  });
}
