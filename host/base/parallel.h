// Splitting a list of independent items (images) over threads in contiguous runs, for passes whose
// per-worker results are combined in a fixed order afterwards (so any thread count gives the same bits).
#pragma once
#include <stddef.h>

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace tvh {

// The number of workers for_each_run uses for n items on `threads` threads (at least 1, at most n).
inline int run_workers(size_t n, int threads) {
  return (int)std::max<size_t>(1, std::min<size_t>((size_t)std::max(1, threads), n));
}

// Calls fn(worker, from, to) for worker = 0 .. run_workers(n, threads) - 1 on the items [from, to) of
// contiguous runs covering 0..n in order, worker 0 on the calling thread; returns when all are done.
// What a worker throws (a tvh::Error on a model that goes non-finite, say) is rethrown here once every
// worker has stopped: the lowest worker's, so the message does not depend on timing.
template <typename Fn>
void for_each_run(size_t n, int threads, Fn&& fn) {
  const size_t t = (size_t)run_workers(n, threads);
  std::vector<std::exception_ptr> failed(t);
  auto guarded = [&fn, &failed, n, t](size_t w) {
    try {
      fn((int)w, n * w / t, n * (w + 1) / t);
    } catch (...) {
      failed[w] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < t; ++w) pool.emplace_back(guarded, w);
  guarded(0);
  for (auto& th : pool) th.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace tvh
