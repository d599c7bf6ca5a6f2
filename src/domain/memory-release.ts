// When the photo workers hand their memory back (docs/memory.md, "Hot while busy, lean when idle"):
// the pool's option and `cutout serve --memory-release`. No imports: config.ts reads it.

/**
 * 'idle' (the default): once the pool has been empty for a while (src/pool/idle-release.ts), so
 * requests that keep coming find their memory mapped. 'every-task': after every task, the old policy:
 * the smallest footprint while busy, every request faulting its memory in again (for hosts where
 * memory is scarcer than time, and for measuring).
 */
export type MemoryRelease = 'idle' | 'every-task';
export const MEMORY_RELEASES: readonly MemoryRelease[] = ['idle', 'every-task'];
export const DEFAULT_MEMORY_RELEASE: MemoryRelease = 'idle';

/** The policy named by `text`, or undefined when it names none. */
export function parseMemoryRelease(text: string): MemoryRelease | undefined {
  return MEMORY_RELEASES.find((m) => m === text.trim().toLowerCase());
}
