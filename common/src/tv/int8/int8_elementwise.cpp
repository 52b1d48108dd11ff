// Int8 elementwise ops: rescale, Add, Mul. Each rounds the exact real result half up to e_out.
#include "tv/int8/int8_ops.h"

namespace tv {
namespace {

// sat8(round_half_up(v * 2^-s)) for an exact integer v; s < 0 scales up (exactly, saturating).
int8_t to_exponent(int64_t v, int s) {
  if (s >= 0) return requantize_s8(v, s);
  if (v == 0) return 0;
  if (s < -16) return v > 0 ? 127 : -128;  // |v| >= 1 times 2^17 saturates
  return sat8(v * ((int64_t)1 << (-s)));
}

}  // namespace

void rescale_s8(const int8_t* in, size_t n, int e_in, int e_out, int8_t* out) {
  const int s = e_out - e_in;
  for (size_t i = 0; i < n; ++i) out[i] = to_exponent(in[i], s);
}

void add_s8(const int8_t* a, int e_a, const int8_t* b, int e_b, size_t n, int e_out, int8_t* out) {
  // Both terms are brought exactly to the finer exponent ef, added, then moved to e_out. When the
  // exponents are more than 40 apart, the finer term (< 2^(ec-32)) can only break a tie or push past
  // a rounding boundary that lies at least 2^(ec-9) away, so it is replaced by its sign at ec - 40:
  // the rounded result is the same and the sum stays inside int64.
  const bool a_is_coarse = e_a >= e_b;
  const int8_t* coarse = a_is_coarse ? a : b;
  const int8_t* fine = a_is_coarse ? b : a;
  const int ec = a_is_coarse ? e_a : e_b;
  const int ef_true = a_is_coarse ? e_b : e_a;
  const bool capped = ec - ef_true > 40;
  const int ef = capped ? ec - 40 : ef_true;
  const int d = ec - ef;
  for (size_t i = 0; i < n; ++i) {
    const int64_t c = coarse[i];
    int64_t f = fine[i];
    if (capped) {
      if (c == 0) {
        out[i] = to_exponent(f, e_out - ef_true);
        continue;
      }
      f = (f > 0) - (f < 0);
    }
    out[i] = to_exponent(c * ((int64_t)1 << d) + f, e_out - ef);
  }
}

void mul_s8(const int8_t* a, int e_a, const int8_t* b, int e_b, size_t n, int e_out, int8_t* out) {
  const int s = e_out - e_a - e_b;
  for (size_t i = 0; i < n; ++i) out[i] = to_exponent((int64_t)a[i] * b[i], s);
}

}  // namespace tv
