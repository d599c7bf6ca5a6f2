// The benches' `cutout serve` children must end with the bench. A bench stopped by a signal (`timeout`,
// Ctrl-C, a closed terminal) ran no `finally`, so its server kept running, listening and holding its
// worker pool, beside whatever ran next. A child given here gets SIGTERM when the bench is signalled
// (then SIGKILL if it has not drained within KILL_AFTER_MS) or exits, and the bench then ends as the
// signal meant it to.

import type { ChildProcess } from 'node:child_process';
import os from 'node:os';

const KILL_AFTER_MS = 10_000;
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

const live = new Set<ChildProcess>();
let installed = false;

/** Ends `child` with this process: on SIGTERM, SIGINT or SIGHUP, and on exit. */
export function reapWithBench(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (installed) return;
  installed = true;
  for (const signal of SIGNALS) process.once(signal, () => void endOnSignal(signal));
  // An exit without a signal (an uncaught error, process.exit) cannot wait: ask once, synchronously.
  process.once('exit', () => {
    for (const c of live) c.kill('SIGTERM');
  });
}

async function endOnSignal(signal: (typeof SIGNALS)[number]): Promise<void> {
  const children = [...live];
  const exited = children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => c.once('exit', () => r()))));
  for (const c of children) c.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }, KILL_AFTER_MS);
  await Promise.all(exited);
  clearTimeout(timer);
  // The status a shell reports for a process ended by this signal.
  process.exit(128 + os.constants.signals[signal]);
}
