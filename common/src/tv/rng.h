// A small seeded generator (splitmix64) with the same sequence on every platform.
#pragma once
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed = 0) : state(seed) {}
  // Next 64 random bits.
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits.
  float uniform() { return (float)(next() >> 40) * (1.0f / 16777216.0f); }
  // Uniform integer in [0, n), n > 0 (no modulo bias worth caring about for n < 2^32).
  uint32_t below(uint32_t n) { return (uint32_t)(((next() >> 32) * (uint64_t)n) >> 32); }
  // Standard normal (Box-Muller).
  float normal();
};

// A seed derived from several numbers, for per-(epoch, sample) streams independent of thread count.
inline uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0) {
  Rng r(a ^ 0x5851F42D4C957F2DULL);
  uint64_t x = r.next() ^ (b * 0x9E3779B97F4A7C15ULL);
  Rng r2(x);
  return r2.next() ^ (c * 0xD6E8FEB86659FD93ULL);
}

// Fisher-Yates shuffle of idx[0..n).
void shuffle(int* idx, int n, Rng& rng);

}  // namespace tv
