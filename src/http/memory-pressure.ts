// What the server asks of the process's memory before it takes a new request body (context.ts).
// The reading itself lives below the server (process/memory-pressure.ts), which fits this shape;
// the server only names the shape, so it depends on no process/ code.

export interface MemoryPressure {
  /** The process's share of the memory limit, in bytes. */
  readonly limitBytes: number;
  /** The resident memory as last read, in bytes. */
  rssBytes(): number;
  /** True when no new body should be taken now. */
  high(): boolean;
}
