// Parent-side handle for ledger-child.js: fork it on a folder and exchange request/reply messages.

import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ChildReply, ChildRequest } from './ledger-child.js';

export const CHILD_SCRIPT = fileURLToPath(new URL('./ledger-child.js', import.meta.url));

export interface LedgerChild {
  proc: ChildProcess;
  /** Send one request and wait for the reply with the same op. */
  ask(m: ChildRequest): Promise<ChildReply>;
  /** Resolves with the exit signal/code. */
  exited: Promise<unknown>;
}

export async function forkLedgerChild(dir: string): Promise<LedgerChild> {
  const proc = fork(CHILD_SCRIPT, [dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(proc, 'exit');
  const replies: ChildReply[] = [];
  const waiters: Array<(m: ChildReply) => void> = [];
  proc.on('message', (m: ChildReply) => {
    const w = waiters.shift();
    if (w) w(m);
    else replies.push(m);
  });
  const next = (): Promise<ChildReply> =>
    new Promise((resolve) => {
      const m = replies.shift();
      if (m) resolve(m);
      else waiters.push(resolve);
    });
  const ready = await next();
  if (ready.op !== 'ready') throw new Error(`child: expected ready, got ${ready.op}`);
  return {
    proc,
    exited,
    ask(m) {
      proc.send(m);
      return next();
    },
  };
}
