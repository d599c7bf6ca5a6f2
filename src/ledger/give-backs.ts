// Give-backs (a refund, a slot or storage release) that a full disk refused. The request has its answer
// already (a 503); what it held must still come back, so each is tried again every second until it is
// written, then dropped. Each give-back is idempotent. What a process still owes when it exits is a hold
// or slot of a dead owner: the next start's reconcile gives it back.

import { isDiskFailure } from './disk-failure.js';

const RETRY_MS = 1000;

export interface GiveBacks {
  /** Run `fn` now; if the disk refuses it, keep it and try again later (resolves either way). */
  run(fn: () => void): void;
  /** How many are waiting for room. */
  readonly owed: number;
  /** Try the waiting ones now: before new work, so a request after the disk is back never meets a slot an ended one still holds. */
  retry(): void;
  /** Try the waiting ones now (at close), then stop retrying. */
  stop(): void;
}

export function giveBacks(): GiveBacks {
  const waiting = new Set<() => void>();
  let timer: NodeJS.Timeout | undefined;

  const attempt = (fn: () => void): boolean => {
    try {
      fn();
      return true;
    } catch (err) {
      if (!isDiskFailure(err)) throw err;
      return false;
    }
  };
  const retry = (): void => {
    for (const fn of waiting) {
      let done: boolean;
      try {
        done = attempt(fn);
      } catch {
        done = true; // not a disk failure: retrying cannot help (the ledger was closed, say)
      }
      if (done) waiting.delete(fn);
      else break; // still full: the rest would be refused too
    }
    if (waiting.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    run(fn) {
      if (attempt(fn)) return;
      waiting.add(fn);
      timer ??= setInterval(retry, RETRY_MS).unref();
    },
    get owed() {
      return waiting.size;
    },
    retry() {
      if (waiting.size > 0) retry();
    },
    stop() {
      if (waiting.size > 0) retry();
      clearInterval(timer);
      timer = undefined;
    },
  };
}
