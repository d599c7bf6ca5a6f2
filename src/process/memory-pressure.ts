// Memory pressure at run time: this process's resident memory against its share of the
// memory limit (memory-limit.ts). The start-up sizing (pool/memory-fit.ts) plans the busy peak within
// MEMORY_LIMIT_SHARE of the limit; should the process still come near the limit (photos larger than the
// estimate counted, something else in the cgroup), a request whose body is not read yet is answered 503
// service_busy + Retry-After (http/context.ts), so the work waits at the clients instead of in this
// process's memory and the kernel's OOM killer has nothing to choose. Requests already admitted finish.

/** Above this share of the limit, new request bodies are refused. */
export const PRESSURE_SHARE = 0.95;

/** How long one reading of the RSS stands (reading it is a /proc read; a burst of requests shares one). */
const READ_EVERY_MS = 100;

/** Fits the shape the server asks for (http/memory-pressure.ts) without importing it: process/ sits below http/. */
export class MemoryPressure {
  /** RSS above which the process is under pressure. */
  readonly thresholdBytes: number;
  private lastRead = Number.NEGATIVE_INFINITY;
  private lastRss = 0;

  constructor(
    /** The process's share of the memory limit (MemoryLimit.bytes). */
    readonly limitBytes: number,
    private readonly readRss: () => number = () => process.memoryUsage.rss(),
    private readonly now: () => number = () => performance.now(),
  ) {
    this.thresholdBytes = Math.floor(limitBytes * PRESSURE_SHARE);
  }

  /** The RSS as last read (at most READ_EVERY_MS old). */
  rssBytes(): number {
    const t = this.now();
    if (t - this.lastRead >= READ_EVERY_MS) {
      this.lastRss = this.readRss();
      this.lastRead = t;
    }
    return this.lastRss;
  }

  /** True when the RSS is above the threshold: take no new body now. */
  high(): boolean {
    return this.rssBytes() > this.thresholdBytes;
  }
}
