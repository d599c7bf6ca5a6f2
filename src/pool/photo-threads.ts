// How many threads one photo's passes (the model-input resize, the composite stages, the PNG deflate)
// may use, decided when its task starts: the cores shared among the photos being worked on then.
// Under load each photo keeps the worker's own share; a photo alone takes every core, so a lone
// request on a big box is not held to one core while the others idle (latency at
// concurrency 1). The passes give the same bytes for any thread count.

/**
 * `cores` split among `running` photos (this one included), never below `floor` (the worker's own
 * share, e.g. its ONNX Runtime threads on the CPU path) nor above `cores`.
 */
export function photoThreadsNow(cores: number, running: number, floor: number): number {
  const share = Math.floor(cores / Math.max(1, running));
  return Math.max(1, Math.min(Math.max(floor, share), Math.max(cores, floor)));
}
