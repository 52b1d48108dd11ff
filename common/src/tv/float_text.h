// Exact decimal text of floats and integers without printf (device-safe: no heap, no locale), so the
// firmware and the host tools write byte-identical headers. Every routine is correctly rounded on
// the exact binary value, as glibc's printf.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// Room for any formatted float below, terminating NUL included ("%.6f" of -FLT_MAX is 47 chars).
constexpr size_t kFloatTextMax = 64;

// Formats v exactly as printf("%.9g") would (correctly rounded, round-half-even on the exact value).
// Writes a NUL-terminated string into buf (kFloatTextMax bytes); returns its length, 0 for inf/NaN.
size_t format_float_g9(float v, char* buf);
// A C float literal that the compiler parses back to exactly v: the "%.9g" text, ".0" appended when
// it has neither '.' nor exponent, then 'f' (0.1f -> "0.100000001f", 1 -> "1.0f", -0 -> "-0.0f").
// Returns its length, 0 for inf/NaN.
size_t format_float_literal(float v, char* buf);
// Formats v exactly as printf("%.6f") would (correctly rounded; "-0.000000" for negative values that
// round to zero, as glibc). Returns its length, 0 for inf/NaN.
size_t format_float_fixed6(float v, char* buf);
// Decimal text of a signed integer; returns its length (buf holds at least 21 bytes).
size_t format_int(int64_t v, char* buf);

}  // namespace tv
