#include "tv/float_text.h"

#include <string.h>

namespace tv {

namespace {

// A small unsigned big integer (little-endian 32-bit limbs), enough for m * 2^104 * 10^6 and
// m * 10^54 (m < 2^24): the largest products the float formatters need.
struct Big {
  static constexpr int kLimbs = 10;
  uint32_t w[kLimbs];
  int n;  // limbs in use; w[n-1] != 0 unless n == 0
};

void big_set(Big* b, uint64_t v) {
  b->n = 0;
  while (v) {
    b->w[b->n++] = (uint32_t)v;
    v >>= 32;
  }
}

void big_trim(Big* b) {
  while (b->n > 0 && b->w[b->n - 1] == 0) --b->n;
}

void big_mul_small(Big* b, uint32_t m) {
  uint64_t carry = 0;
  for (int i = 0; i < b->n; ++i) {
    uint64_t t = (uint64_t)b->w[i] * m + carry;
    b->w[i] = (uint32_t)t;
    carry = t >> 32;
  }
  if (carry && b->n < Big::kLimbs) b->w[b->n++] = (uint32_t)carry;
}

void big_shl(Big* b, int bits) {
  if (b->n == 0) return;
  const int limbs = bits / 32, r = bits % 32;
  int n = b->n + limbs + 1;
  if (n > Big::kLimbs) n = Big::kLimbs;  // callers stay far below the capacity
  for (int i = n - 1; i >= 0; --i) {
    const int src = i - limbs;
    uint32_t hi = (src >= 0 && src < b->n) ? b->w[src] : 0;
    uint32_t lo = (src - 1 >= 0 && src - 1 < b->n) ? b->w[src - 1] : 0;
    b->w[i] = r ? (hi << r) | (lo >> (32 - r)) : hi;
  }
  b->n = n;
  big_trim(b);
}

// Divides by d in place; returns the remainder.
uint32_t big_div_small(Big* b, uint32_t d) {
  uint64_t rem = 0;
  for (int i = b->n - 1; i >= 0; --i) {
    uint64_t cur = (rem << 32) | b->w[i];
    b->w[i] = (uint32_t)(cur / d);
    rem = cur % d;
  }
  big_trim(b);
  return (uint32_t)rem;
}

bool big_bit(const Big& b, int i) {
  const int limb = i / 32;
  return limb < b.n && ((b.w[limb] >> (i % 32)) & 1u);
}

// How the discarded part of a division compares with half of the divisor.
enum Rest { kExact = 0, kBelowHalf = 1, kHalf = 2, kAboveHalf = 3 };

// Shifts right by s > 0 bits; returns how the discarded bits compare with half.
Rest big_shr(Big* b, int s) {
  const bool half = big_bit(*b, s - 1);
  bool sticky = false;
  for (int i = 0; i < s - 1 && !sticky; ++i) sticky = big_bit(*b, i);
  const int limbs = s / 32, r = s % 32;
  for (int i = 0; i < b->n; ++i) {
    const int src = i + limbs;
    uint32_t lo = src < b->n ? b->w[src] : 0;
    uint32_t hi = src + 1 < b->n ? b->w[src + 1] : 0;
    b->w[i] = r ? (lo >> r) | (hi << (32 - r)) : lo;
  }
  big_trim(b);
  if (!half) return sticky ? kBelowHalf : kExact;
  return sticky ? kAboveHalf : kHalf;
}

// Divides by 10^j (j > 0); returns how the remainder compares with half of 10^j.
Rest big_div_pow10(Big* b, int j) {
  bool sticky = false;
  uint32_t last = 0;
  for (int i = 0; i < j; ++i) {
    if (i > 0 && last) sticky = true;
    last = big_div_small(b, 10);
  }
  if (last > 5 || (last == 5 && sticky)) return kAboveHalf;
  if (last == 5) return kHalf;
  return (last || sticky) ? kBelowHalf : kExact;
}

void big_add_one(Big* b) {
  for (int i = 0; i < b->n; ++i)
    if (++b->w[i] != 0) return;
  if (b->n < Big::kLimbs) b->w[b->n++] = 1;
}

// Compares with a 64-bit value: -1, 0, 1.
int big_cmp_u64(const Big& b, uint64_t v) {
  if (b.n > 2) return 1;
  uint64_t x = b.n == 0 ? 0 : (b.n == 1 ? b.w[0] : ((uint64_t)b.w[1] << 32 | b.w[0]));
  return x < v ? -1 : (x > v ? 1 : 0);
}

uint64_t big_u64(const Big& b) {
  return b.n == 0 ? 0 : (b.n == 1 ? b.w[0] : ((uint64_t)b.w[1] << 32 | b.w[0]));
}

// q = m * 2^e * 10^k rounded half-to-even (round) or truncated (!round). Never both e < 0 and k < 0
// (the callers' ranges exclude it: a float below 2^24 needs k > 0 for nine digits).
void scaled(uint32_t m, int e, int k, bool round, Big* q) {
  big_set(q, m);
  if (e > 0) big_shl(q, e);
  for (int i = 0; i < k; ++i) big_mul_small(q, 10);
  Rest rest = kExact;
  if (e < 0)
    rest = big_shr(q, -e);
  else if (k < 0)
    rest = big_div_pow10(q, -k);
  if (round && (rest == kAboveHalf || (rest == kHalf && q->n > 0 && (q->w[0] & 1u)))) big_add_one(q);
}

// A finite float: its sign and magnitude m * 2^e.
struct FloatParts {
  bool neg;
  uint32_t m;
  int e;
};

// Splits a finite float; for inf/NaN writes "" to buf (what the formatters print) and returns false.
bool decompose(float v, FloatParts* p, char* buf) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  p->neg = (bits >> 31) != 0;
  const uint32_t exp = (bits >> 23) & 0xFFu, frac = bits & 0x7FFFFFu;
  if (exp == 0xFFu) {
    buf[0] = 0;
    return false;
  }
  if (exp == 0) {
    p->m = frac;
    p->e = -149;
  } else {
    p->m = frac | 0x800000u;
    p->e = (int)exp - 150;
  }
  return true;
}

int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

size_t put_digits(uint64_t v, char* out) {  // no sign, at least one digit
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return (size_t)n;
}

}  // namespace

size_t format_int(int64_t v, char* buf) {
  size_t n = 0;
  uint64_t u = (uint64_t)v;
  if (v < 0) {
    buf[n++] = '-';
    u = 0 - u;
  }
  n += put_digits(u, buf + n);
  buf[n] = 0;
  return n;
}

size_t format_float_g9(float v, char* buf) {
  FloatParts p;
  if (!decompose(v, &p, buf)) return 0;
  size_t n = 0;
  if (p.neg) buf[n++] = '-';
  if (p.m == 0) {
    buf[n++] = '0';
    buf[n] = 0;
    return n;
  }
  // Decimal exponent x with 10^x <= v < 10^(x+1): estimate from the binary exponent, then correct.
  int bitlen = 0;
  for (uint32_t t = p.m; t; t >>= 1) ++bitlen;
  int x = floor_div((bitlen - 1 + p.e) * 78913, 262144);  // log10(2) ~ 78913 / 2^18
  Big q;
  for (int guard = 0; guard < 8; ++guard) {
    scaled(p.m, p.e, 8 - x, false, &q);
    if (big_cmp_u64(q, 1000000000ull) >= 0) {
      ++x;
    } else if (big_cmp_u64(q, 100000000ull) < 0) {
      --x;
    } else {
      break;
    }
  }
  scaled(p.m, p.e, 8 - x, true, &q);
  uint64_t d = big_u64(q);
  if (d >= 1000000000ull) {  // rounding carried into a tenth digit
    d /= 10;
    ++x;
  }
  char digits[9];
  for (int i = 8; i >= 0; --i) {
    digits[i] = (char)('0' + d % 10);
    d /= 10;
  }
  int nd = 9;
  while (nd > 1 && digits[nd - 1] == '0') --nd;  // %g drops trailing zeros
  if (x < -4 || x >= 9) {
    buf[n++] = digits[0];
    if (nd > 1) {
      buf[n++] = '.';
      for (int i = 1; i < nd; ++i) buf[n++] = digits[i];
    }
    buf[n++] = 'e';
    buf[n++] = x < 0 ? '-' : '+';
    int ax = x < 0 ? -x : x;
    if (ax < 10) buf[n++] = '0';
    n += put_digits((uint64_t)ax, buf + n);
  } else if (x >= 0) {
    for (int i = 0; i <= x; ++i) buf[n++] = digits[i];
    if (nd > x + 1) {
      buf[n++] = '.';
      for (int i = x + 1; i < nd; ++i) buf[n++] = digits[i];
    }
  } else {
    buf[n++] = '0';
    buf[n++] = '.';
    for (int i = 0; i < -x - 1; ++i) buf[n++] = '0';
    for (int i = 0; i < nd; ++i) buf[n++] = digits[i];
  }
  buf[n] = 0;
  return n;
}

size_t format_float_literal(float v, char* buf) {
  size_t n = format_float_g9(v, buf);
  if (n == 0) return 0;
  bool plain = true;
  for (size_t i = 0; i < n; ++i)
    if (buf[i] == '.' || buf[i] == 'e') plain = false;
  if (plain) {
    buf[n++] = '.';
    buf[n++] = '0';
  }
  buf[n++] = 'f';
  buf[n] = 0;
  return n;
}

size_t format_float_fixed6(float v, char* buf) {
  FloatParts p;
  if (!decompose(v, &p, buf)) return 0;
  Big q;
  scaled(p.m, p.e, 6, true, &q);
  char rev[kFloatTextMax];
  int nd = 0;
  while (q.n > 0) rev[nd++] = (char)('0' + big_div_small(&q, 10));
  while (nd < 7) rev[nd++] = '0';
  size_t n = 0;
  if (p.neg) buf[n++] = '-';
  for (int i = nd - 1; i >= 6; --i) buf[n++] = rev[i];
  buf[n++] = '.';
  for (int i = 5; i >= 0; --i) buf[n++] = rev[i];
  buf[n] = 0;
  return n;
}

}  // namespace tv
