#include "tv/rng.h"

#include <math.h>

namespace tv {

float Rng::normal() {
  // 53-bit uniforms in (0, 1] and [0, 1) in double, so the log never sees zero.
  double u1 = ((double)(next() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  double u2 = (double)(next() >> 11) * (1.0 / 9007199254740992.0);
  return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
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
