// How many image_url / bg_image_url downloads, and how many of their DNS look-ups, one process runs at
// once. A look-up (getaddrinfo) runs on libuv's thread pool, the pool every worker's sharp calls share,
// and it cannot be aborted: a timed-out look-up still holds its thread until the resolver gives up. So
// a look-up keeps its place here until it really returns, and look-ups never hold more than half of the
// pool; downloads beyond `maxFetches` are refused (503), look-ups wait in order for a place.

/** Too many downloads or look-ups in this process: the client should retry later (503 service_busy). */
export class FetchBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchBusyError';
  }
}

/** The look-up itself ran past its time: `reason` completes "Failed to download image …: ". */
export class LookupTimeoutError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'LookupTimeoutError';
  }
}

export interface FetchGateLimits {
  /** Downloads at once (each may hold up to 22 MB while it arrives). */
  maxFetches: number;
  /** getaddrinfo calls on the thread pool at once, abandoned ones included. */
  maxLookups: number;
}

/** Half of libuv's pool (UV_THREADPOOL_SIZE, set at start-up by process/threadpool-size.ts), at least 1. */
export function defaultMaxLookups(env: NodeJS.ProcessEnv = process.env): number {
  const pool = Number(env.UV_THREADPOOL_SIZE);
  return Math.max(1, Math.floor((Number.isInteger(pool) && pool > 0 ? pool : 4) / 2));
}

export const DEFAULT_MAX_FETCHES = 16;

export class FetchGate {
  private fetches = 0;
  private lookups = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limits: FetchGateLimits) {}

  /** Downloads and look-ups under way (look-ups include abandoned ones still on the pool). */
  get inUse(): { fetches: number; lookups: number; waitingLookups: number } {
    return { fetches: this.fetches, lookups: this.lookups, waitingLookups: this.waiting.length };
  }

  /** Take a download place; returns its release (idempotent). Throws FetchBusyError when all are taken. */
  enter(): () => void {
    if (this.fetches >= this.limits.maxFetches) {
      throw new FetchBusyError(`${this.limits.maxFetches} image downloads are already in progress`);
    }
    this.fetches++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.fetches--;
    };
  }

  /**
   * Run `resolve` once a look-up place is free, giving up after `timeoutMs` in all (waiting included) or
   * when `signal` fires. Waiting past the time is FetchBusyError (the pool was busy, not the name);
   * the look-up itself past it is LookupTimeoutError. An abandoned look-up keeps its place until it returns.
   */
  async lookup<T>(host: string, resolve: () => Promise<T>, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    let started = false;
    let giveUp!: (err: unknown) => void;
    const stop = new Promise<never>((_, reject) => (giveUp = reject));
    stop.catch(() => undefined);
    const timer = setTimeout(() => {
      giveUp(
        started
          ? new LookupTimeoutError(`Could not resolve host '${host}': the DNS look-up timed out after ${timeoutMs} ms`)
          : new FetchBusyError(`all ${this.limits.maxLookups} DNS look-up places stayed busy for ${timeoutMs} ms`),
      );
    }, timeoutMs);
    const onAbort = () => giveUp(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const place = this.takeLookupPlace();
    try {
      await Promise.race([place.ready, stop]);
      started = true;
      const running = (async () => resolve())();
      // The look-up keeps its place until it returns, answered or abandoned.
      running.then(place.release, place.release);
      return await Promise.race([running, stop]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (!started) place.release(); // gave up while waiting: leave the queue, or pass on a place just given
    }
  }

  /** A place in the look-up FIFO: `ready` once held; `release` (idempotent) frees it or leaves the queue. */
  private takeLookupPlace(): { ready: Promise<void>; release: () => void } {
    let held = false;
    let done = false;
    let admit!: () => void;
    const ready = new Promise<void>((r) => (admit = r));
    const wake = () => {
      held = true;
      this.lookups++;
      admit();
    };
    const release = () => {
      if (done) return;
      done = true;
      if (held) {
        this.lookups--;
        this.waiting.shift()?.();
      } else {
        const i = this.waiting.indexOf(wake);
        if (i >= 0) this.waiting.splice(i, 1);
      }
    };
    if (this.lookups < this.limits.maxLookups && this.waiting.length === 0) wake();
    else this.waiting.push(wake);
    return { ready, release };
  }
}

let processGate: FetchGate | undefined;

/** The process's gate (created on first use, after threadpool-size.ts has set the pool size). */
export function processFetchGate(): FetchGate {
  processGate ??= new FetchGate({ maxFetches: DEFAULT_MAX_FETCHES, maxLookups: defaultMaxLookups() });
  return processGate;
}
