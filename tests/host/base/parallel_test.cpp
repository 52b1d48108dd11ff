// The pool the calibration passes run on (host/base/parallel.h): every item once, in contiguous runs, and a
// worker's exception comes back to the caller (the lowest worker's) instead of ending the process.
#include "host/base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

TEST(ForEachRun, CoversEveryItemOnceAndRethrows) {
  for (int threads : {1, 2, 3, 7}) {
    std::vector<std::atomic<int>> seen(10);
    tvh::for_each_run(10, threads, [&](int, size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) ++seen[i];
    });
    for (auto& s : seen) EXPECT_EQ(s.load(), 1) << threads;
  }
  EXPECT_THROW(tvh::for_each_run(10, 3,
                                 [](int w, size_t, size_t) {
                                   if (w >= 1) throw std::runtime_error("worker " + std::to_string(w));
                                 }),
               std::runtime_error);
  try {
    tvh::for_each_run(10, 3, [](int w, size_t, size_t) {
      if (w >= 1) throw std::runtime_error("worker " + std::to_string(w));
    });
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker 1");
  }
}
