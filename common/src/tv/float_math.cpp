// exp, log, cos(pi x) and integer powers in single precision (contracts in float_math.h).
#include "tv/float_math.h"

namespace tv {
namespace math {

namespace {

// 2^k for -126 <= k <= 127, exactly.
float pow2(int k) {
  return float_of((uint32_t)(k + 127) << 23);
}

const float kInf = float_of(0x7f800000u);
const float kNaN = float_of(0x7fc00000u);

// ln 2 split in two: kLn2Hi has 16 significant bits, so k * kLn2Hi is exact for |k| < 256.
const float kLn2Hi = 0.693145752f;
const float kLn2Lo = 1.42860677e-06f;

// Doubled-float products (Dekker): a value is hi + lo with |lo| <= ulp(hi) / 2, each product exact
// before the last rounding, so the repeated squaring loses no more than about 2^-40 relative.
struct Pair {
  float hi, lo;
};

// a = hi + lo with hi holding the upper 12 significand bits (Veltkamp's split; exact).
void split(float a, float* hi, float* lo) {
  const float c = 4097.0f * a;
  *hi = c - (c - a);
  *lo = a - *hi;
}

// a * b as an exact pair (Dekker's product; no fused multiply-add needed).
Pair two_product(float a, float b) {
  float ah, al, bh, bl;
  split(a, &ah, &al);
  split(b, &bh, &bl);
  const float p = a * b;
  return Pair{p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}

Pair mul(Pair x, Pair y) {
  const Pair p = two_product(x.hi, y.hi);
  const float lo = p.lo + (x.hi * y.lo + x.lo * y.hi);
  const float hi = p.hi + lo;
  return Pair{hi, lo - (hi - p.hi)};
}

}  // namespace

float exp(float x) {
  if (x != x) return x;
  if (x > 88.7228394f) return kInf;  // the largest x whose e^x rounds to a finite float
  if (x < -104.0f) return 0.0f;      // e^-104 is below half the smallest subnormal
  // x = k ln2 + r with |r| <= ln2 / 2 (about); x - k * kLn2Hi is exact (the two are within a factor of 2).
  const float t = x * 1.44269502f;
  const int k = (int)(t + (t >= 0.0f ? 0.5f : -0.5f));
  const float r = (x - (float)k * kLn2Hi) - (float)k * kLn2Lo;
  // e^r = 1 + p with p = r + r^2 (1/2! + r/3! + ... + r^5/7!), Taylor to r^7 (truncation < 2^-28).
  const float q = 0.5f + r * (0.166666672f +
                              r * (0.0416666679f + r * (0.00833333377f + r * (0.00138888892f + r * 0.000198412701f))));
  const float p = r + (r * r) * q;
  const float y = 1.0f + p;
  if (k > 127) return y * pow2(127) * 2.0f;
  if (k < -126) return y * pow2(k + 100) * pow2(-100);  // the first product is exact; one rounding into the subnormals
  return y * pow2(k);
}

float log(float x) {
  if (x != x) return x;
  if (x < 0.0f) return kNaN;
  if (x == 0.0f) return -kInf;
  if (x == kInf) return x;
  uint32_t u = bits_of(x);
  int k = 0;
  if (u < 0x00800000u) {  // subnormal: scale into the normal range first (exact)
    u = bits_of(x * pow2(25));
    k = -25;
  }
  // x = 2^k * m with m in [sqrt(1/2), sqrt(2)).
  k += (int)(u >> 23) - 127;
  u &= 0x007fffffu;
  if (u > 0x003504f3u) {  // m above sqrt(2): take m / 2 instead
    u |= 0x3f000000u;
    k += 1;
  } else {
    u |= 0x3f800000u;
  }
  const float f = float_of(u) - 1.0f;  // exact
  // log(1 + f) = 2 atanh(s) with s = f / (2 + f), |s| < 0.172: 2s + s R with R = 2s^2/3 + 2s^4/5 + ...,
  // and 2s = f - s f, so log(1 + f) = f - s (f - R): f is exact and the correction is small.
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float R = z * (0.666666687f + z * (0.400000006f + z * (0.285714298f + z * (0.222222224f + z * 0.181818187f))));
  const float log1p_f = f - s * (f - R);
  const float kf = (float)k;
  return kf * kLn2Hi + (log1p_f + kf * kLn2Lo);
}

float cospi(float x) {
  if (x != x) return x;
  float a = x < 0.0f ? -x : x;  // cos is even
  if (a == kInf) return kNaN;
  if (a >= 16777216.0f) return 1.0f;                              // every float from 2^24 up is an even integer
  if (a >= 8388608.0f) return ((uint32_t)a & 1u) ? -1.0f : 1.0f;  // integers from 2^23 up
  // a = j / 2 + r with j the integer nearest 2a and |r| <= 1/4; 2a and r are exact.
  const float t = 2.0f * a;
  int j = (int)t;
  if (t - (float)j >= 0.5f) ++j;
  const float r = a - 0.5f * (float)j;
  const float z = r * r;
  // sin(pi r) = pi r - (pi r)^3 / 3! + ... and cos(pi r) = 1 - (pi r)^2 / 2! + ..., Taylor to r^9 and
  // r^10 (truncation < 2^-28 for |r| <= 1/4); pi r is pi_f r (an exact pair) + (pi - pi_f) r.
  const Pair pi_r = two_product(r, 3.14159274f);  // exact
  const float sin_pr =
      pi_r.hi + (pi_r.lo + r * (-8.74227801e-08f +
                                z * (-5.16771269f + z * (2.55016398f + z * (-0.599264503f + z * 0.0821458846f)))));
  const float cos_pr =
      1.0f + z * (-4.93480206f + z * (4.05871201f + z * (-1.33526278f + z * (0.235330626f + z * -0.0258068908f))));
  switch (j & 3) {  // cos(pi (j/2 + r))
    case 0: return cos_pr;
    case 1: return -sin_pr;
    case 2: return -cos_pr;
    default: return sin_pr;
  }
}

float powi(float base, uint32_t n) {
  Pair result{1.0f, 0.0f};
  Pair square{base, 0.0f};
  while (n) {
    if (n & 1u) result = mul(result, square);
    n >>= 1;
    if (n) square = mul(square, square);
  }
  return result.hi + result.lo;
}

}  // namespace math
}  // namespace tv
