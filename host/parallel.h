// Splitting a list of independent items (images) over threads in contiguous runs, for passes whose
// per-worker results are combined in a fixed order afterwards (so any thread count gives the same bits).
#pragma once
#include <stddef.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace tvh {

// The number of workers for_each_run uses for n items on `threads` threads (at least 1, at most n).
inline int run_workers(size_t n, int threads) {
  return (int)std::max<size_t>(1, std::min<size_t>((size_t)std::max(1, threads), n));
}

// Calls fn(worker, from, to) for worker = 0 .. run_workers(n, threads) - 1 on the items [from, to) of
// contiguous runs covering 0..n in order, worker 0 on the calling thread; returns when all are done.
template <typename Fn>
void for_each_run(size_t n, int threads, Fn&& fn) {
  const size_t t = (size_t)run_workers(n, threads);
  std::vector<std::thread> pool;
  for (size_t w = 1; w < t; ++w) pool.emplace_back([&fn, w, n, t] { fn((int)w, n * w / t, n * (w + 1) / t); });
  fn(0, (size_t)0, n / t);
  for (auto& th : pool) th.join();
}

}  // namespace tvh
