#include "host/train/lane_pool.h"

namespace tvh {

LanePool::LanePool(int threads) {
  if (threads < 1) threads = 1;
  threads_ = threads;
  runner_.ctx = this;
  runner_.run = threads > 1 ? &LanePool::run : nullptr;
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

LanePool::~LanePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

// Thread t runs lanes t, t + T, t + 2T, ...; the caller is thread 0.
void LanePool::run(void* ctx, int lanes, tv::LaneFn fn, void* arg) {
  LanePool& p = *(LanePool*)ctx;
  const int T = p.threads();
  {
    std::lock_guard<std::mutex> lock(p.mu_);
    p.fn_ = fn;
    p.arg_ = arg;
    p.lanes_ = lanes;
    p.pending_ = (int)p.workers_.size();
    p.generation_++;
  }
  p.start_cv_.notify_all();
  for (int l = 0; l < lanes; l += T) fn(arg, l);
  std::unique_lock<std::mutex> lock(p.mu_);
  p.done_cv_.wait(lock, [&] { return p.pending_ == 0; });
}

void LanePool::worker(int id) {
  unsigned seen = 0;
  const int T = threads();
  for (;;) {
    tv::LaneFn fn;
    void* arg;
    int lanes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return quit_ || generation_ != seen; });
      if (quit_) return;
      seen = generation_;
      fn = fn_;
      arg = arg_;
      lanes = lanes_;
    }
    for (int l = id; l < lanes; l += T) fn(arg, l);
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_--;
    }
    done_cv_.notify_one();
  }
}

}  // namespace tvh
