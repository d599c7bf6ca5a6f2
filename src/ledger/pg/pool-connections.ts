// The sockets a pg.Pool holds open. pg-pool's end() resolves once it has told its clients to end, before
// their sockets close (a client's 'remove' comes after its socket's close); a ledger's close() waits for
// them, so that nothing of it is left talking to the server when it resolves.

import type pg from 'pg';

export interface OpenConnections {
  /** Resolves when every connection the pool opened has closed, or after waitMs at most. */
  allClosed(waitMs: number): Promise<void>;
}

export function openConnections(pool: pg.Pool): OpenConnections {
  let open = 0;
  let settle: (() => void) | null = null;
  // 'connect' is emitted for a client that connected; one that failed to connect never counts.
  pool.on('connect', () => void open++);
  pool.on('remove', () => {
    open--;
    if (open === 0) settle?.();
  });
  return {
    allClosed(waitMs) {
      if (open === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        // A socket that never reports its close must not hang a shutdown.
        const timer = setTimeout(resolve, waitMs);
        timer.unref();
        settle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}
