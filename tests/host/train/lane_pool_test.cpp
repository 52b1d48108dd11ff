// host/lane_pool: every lane of every batch runs exactly once, on one thread, for any thread count,
// including the first batches of a pool whose workers are still starting.
#include "host/train/lane_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

struct Counts {
  std::atomic<int> runs[tv::kMaxLanes];
  std::atomic<int> busy[tv::kMaxLanes];
  std::atomic<bool> overlap{false};
};

void count_lane(void* arg, int lane) {
  Counts& c = *(Counts*)arg;
  if (c.busy[lane].fetch_add(1) != 0) c.overlap = true;  // two threads in one lane at once
  std::this_thread::yield();
  c.runs[lane].fetch_add(1);
  c.busy[lane].fetch_sub(1);
}

TEST(LanePool, EveryLaneRunsOnceEvenWhileTheWorkersStart) {
  for (int round = 0; round < 200; ++round) {
    for (int threads : {2, 3, 4}) {
      tvh::LanePool pool(threads);  // used at once: its workers may not have started yet
      ASSERT_EQ(pool.threads(), threads);
      for (int lanes : {1, 2, 3, tv::kMaxLanes}) {
        Counts c;
        for (int l = 0; l < tv::kMaxLanes; ++l) c.runs[l] = 0, c.busy[l] = 0;
        pool.runner()->run(pool.runner()->ctx, lanes, count_lane, &c);
        for (int l = 0; l < tv::kMaxLanes; ++l)
          ASSERT_EQ(c.runs[l].load(), l < lanes ? 1 : 0)
              << "round " << round << ", " << threads << " threads, " << lanes << " lanes: lane " << l;
        ASSERT_FALSE(c.overlap.load());
      }
    }
  }
}

}  // namespace
