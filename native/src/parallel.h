// SPDX-License-Identifier: MIT
// Split a loop over [0, n) into contiguous chunks run on `threads` threads (the caller runs the first).
// For the per-photo passes (composite stages, PNG deflate, resize) on large images: the calling
// thread's helpers are kept between calls (Helpers, woken in microseconds), still callers only split
// work that takes milliseconds. Pure C++, no N-API.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cutout {

// The calling thread's helper threads, kept between calls (one set per calling thread: each worker
// thread of a pool has its own, so concurrent callers never wait on each other). Starting a thread
// per call cost ~50 µs on these hosts (create, first run, join), ~19 of them per composite at two
// threads; a parked helper is woken for a fraction of that. Helpers start on first need, wait on a
// condition variable between jobs, and are joined when the calling thread exits.
class Helpers {
 public:
  // Runs part(k) for k in [1, parts) on helpers while the caller runs part 0 itself (through
  // `caller`), and returns once every part is done. False (nothing run) when this thread's helpers
  // are already busy (a ParallelFor inside a part on the calling thread): spawn threads instead.
  template <class Part>
  bool Run(int parts, Part& part) {
    if (busy_) return false;
    busy_ = true;
    struct Free {
      bool& busy;
      ~Free() { busy = false; }
    } free_on_return{busy_};
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (static_cast<int>(threads_.size()) < parts - 1) {
        const int index = static_cast<int>(threads_.size());
        threads_.emplace_back([this, index] { Loop(index); });
      }
      call_ = [](void* ctx, int k) { (*static_cast<Part*>(ctx))(k); };
      ctx_ = &part;
      active_ = parts - 1;
      pending_ = parts - 1;
      ++generation_;
    }
    work_.notify_all();
    part(0);
    {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, [this] { return pending_ == 0; });
    }
    return true;
  }

  ~Helpers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  static Helpers& OfThisThread() {
    thread_local Helpers helpers;
    return helpers;
  }

 private:
  void Loop(int index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_.wait(lock, [&] { return stop_ || (generation_ != seen && index < active_); });
      if (stop_) return;
      seen = generation_;
      void (*call)(void*, int) = call_;
      void* ctx = ctx_;
      lock.unlock();
      call(ctx, index + 1);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex mu_;
  std::condition_variable work_, done_;
  std::vector<std::thread> threads_;
  void (*call_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  uint64_t generation_ = 0;
  int active_ = 0, pending_ = 0;
  bool stop_ = false;
  bool busy_ = false;  // only the owning thread reads and writes it
};

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
  auto run = [&](int k) {
    const int begin = static_cast<int>(static_cast<long long>(n) * k / parts);
    const int end = static_cast<int>(static_cast<long long>(n) * (k + 1) / parts);
    try {
      fn(begin, end);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  if (!Helpers::OfThisThread().Run(parts, run)) {
    std::vector<std::thread> pool;
    pool.reserve(parts - 1);
    for (int k = 1; k < parts; k++) pool.emplace_back(run, k);
    run(0);
    for (auto& t : pool) t.join();
  }
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
