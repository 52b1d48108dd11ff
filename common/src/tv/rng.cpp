#include "tv/rng.h"

#include <math.h>

#include "tv/float_math.h"

namespace tv {

float Rng::normal() {
  // 24-bit uniforms in (0, 1] and [0, 1), so the log never sees zero (|result| <= sqrt(2 ln 2^24) = 5.8).
  const float u1 = (float)((next() >> 40) + 1) * (1.0f / 16777216.0f);
  const float u2 = (float)(next() >> 40) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * math::log(u1)) * math::cospi(2.0f * u2);
}

void shuffle(int* idx, int n, Rng& rng) {
  for (int i = n - 1; i > 0; --i) {
    int j = (int)rng.below((uint32_t)(i + 1));
    int t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
}

}  // namespace tv
