// A fixed pool of threads that runs the core's gradient lanes in parallel (a tv::LaneRunner).
// Threads only decide who computes a lane; the sums stay in the core's fixed lane order, so any
// thread count gives the same bits.
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tv/train/train_loop.h"

namespace tvh {

class LanePool {
 public:
  // threads: total threads including the caller's (1 = everything on the calling thread).
  explicit LanePool(int threads);
  ~LanePool();
  LanePool(const LanePool&) = delete;
  LanePool& operator=(const LanePool&) = delete;
  // The runner to hand to tv::EpochJob (null run when there is only one thread).
  const tv::LaneRunner* runner() const { return &runner_; }
  int threads() const { return threads_; }

 private:
  static void run(void* ctx, int lanes, tv::LaneFn fn, void* arg);
  void worker(int id);
  int threads_ = 1;  // set before any worker starts: a worker reading workers_.size() while the constructor
                     // still adds to it saw fewer threads and ran other threads' lanes too (a race)
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  tv::LaneRunner runner_;
  tv::LaneFn fn_ = nullptr;
  void* arg_ = nullptr;
  int lanes_ = 0;
  unsigned generation_ = 0;
  int pending_ = 0;
  bool quit_ = false;
};

}  // namespace tvh
