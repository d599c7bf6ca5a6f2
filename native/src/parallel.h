// SPDX-License-Identifier: MIT
// Split a loop over [0, n) into contiguous chunks run on `threads` threads (the caller runs the first).
// For the per-photo passes (composite stages, PNG deflate) on large images: the threads are started
// per call (~30 µs each), so callers only split work that takes milliseconds. Pure C++, no N-API.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace cutout {

// Chunks of at least `min_chunk` items; fn(begin, end) runs once per chunk. Chunk boundaries depend
// only on n, threads and min_chunk, so a deterministic fn gives the same result for any split that
// the caller makes independent of the boundaries. The first exception thrown by a chunk is rethrown
// on the caller once every chunk has finished.
template <class Fn>
void ParallelFor(int n, int threads, int min_chunk, Fn&& fn) {
  if (n <= 0) return;
  const int by_size = std::max(1, n / std::max(1, min_chunk));
  const int parts = std::max(1, std::min({threads, by_size, n}));
  if (parts == 1) {
    fn(0, n);
    return;
  }
  std::vector<std::exception_ptr> errors(parts);
  std::vector<std::thread> pool;
  pool.reserve(parts - 1);
  auto run = [&](int k) {
    const int begin = static_cast<int>(static_cast<long long>(n) * k / parts);
    const int end = static_cast<int>(static_cast<long long>(n) * (k + 1) / parts);
    try {
      fn(begin, end);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  for (int k = 1; k < parts; k++) pool.emplace_back(run, k);
  run(0);
  for (auto& t : pool) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// Items [0, n) handed out one at a time to min(threads, n) workers (the caller is worker 0), for work
// whose cost varies per item (rows crossing the matte's band, active tiles) and so that a worker
// delayed by another process does not hold up the others. fn(worker, item) with worker in
// [0, threads): index per-worker scratch with it. Which worker runs an item changes from run to run,
// so fn may write only to what belongs to the item (or to its worker's scratch).
template <class Fn>
void ParallelForEach(int n, int threads, Fn&& fn) {
  if (n <= 0) return;
  const int workers = std::max(1, std::min(threads, n));
  std::atomic<int> next{0};
  ParallelFor(workers, workers, 1, [&](int begin, int end) {
    for (int worker = begin; worker < end; ++worker)  // one worker per chunk
      for (int i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(worker, i);
  });
}

// The most threads one call splits over (callers size per-worker scratch by it).
constexpr int kMaxThreads = 64;
inline int ClampThreads(int threads) { return std::clamp(threads, 1, kMaxThreads); }

// Rows per item when a w-pixel-wide image is split into bands of about `pixels` pixels: large enough
// that claiming an item costs nothing, small enough to balance uneven rows.
inline int BandRows(int w, int pixels = 1 << 18) { return std::max(1, pixels / std::max(1, w)); }

}  // namespace cutout
