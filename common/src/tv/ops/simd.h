// Fixed-width float vectors for the fast kernel variants (GCC/Clang vector extensions).
//
// The compiler maps them to SSE2/AVX2 registers on x86-64, NEON on ARM, and plain scalar code where
// there is no SIMD unit (the ESP32-S3 build), so the fast variants stay portable. Each lane computes
// one element with exactly the scalar operations of the reference kernel (a separate multiply and
// add: the build sets -ffp-contract=off), so the vector width never changes a result.
#pragma once
#include <string.h>

// Function multi-versioning: with GCC on x86-64 Linux, unless the whole build already targets AVX2,
// a function marked TV_TARGET_CLONES is compiled three times (x86-64-v4 = AVX-512, AVX2, baseline
// x86-64) and the dynamic loader picks the best the running CPU supports. All compute the same bits
// (IEEE adds and multiplies, no contraction). The vectors stay 8 floats wide; what AVX-512 brings is
// 32 vector registers instead of 16, so the kernels' accumulator blocks no longer spill (default
// preset training 9 % faster on an AMD EPYC Zen 4, bench/README.md). (Clang refuses the
// 32-byte vector helpers below inside such clones, so Clang builds get the portable code.)
#if defined(__x86_64__) && defined(__linux__) && !defined(__AVX2__) && !defined(TV_NO_TARGET_CLONES) && \
    defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 6
#define TV_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#define TV_HAVE_TARGET_CLONES 1
#else
#define TV_TARGET_CLONES
#endif

// The vectors never cross a non-inline function boundary, so GCC's note that passing 32-byte
// vectors changes the ABI without AVX does not apply.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define TV_SIMD_INLINE static inline __attribute__((always_inline))

namespace tv {
namespace simd {

typedef float f8 __attribute__((vector_size(32)));
typedef float f4 __attribute__((vector_size(16)));

// Unaligned loads and stores of V = f8 or f4 (memcpy compiles to one vector move).
template <class V>
TV_SIMD_INLINE V load_unaligned(const float* p) {
  V v;
  memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
TV_SIMD_INLINE void store_unaligned(float* p, const V& v) {
  memcpy(p, &v, sizeof v);
}
TV_SIMD_INLINE f8 load8(const float* p) {
  return load_unaligned<f8>(p);
}
TV_SIMD_INLINE void store8(float* p, const f8& v) {
  store_unaligned(p, v);
}
TV_SIMD_INLINE f4 load4(const float* p) {
  return load_unaligned<f4>(p);
}
TV_SIMD_INLINE void store4(float* p, const f4& v) {
  store_unaligned(p, v);
}
// x in every lane. Written as a shuffle of lane 0: GCC lowers a plain {x, x, ...} initializer in
// this (baseline-target) helper to lane inserts before it is inlined into an AVX2 clone, whereas a
// shuffle becomes one broadcast there.
#if defined(__clang__)
TV_SIMD_INLINE f8 splat8(float x) {
  return __builtin_shufflevector(f8{x}, f8{x}, 0, 0, 0, 0, 0, 0, 0, 0);
}
TV_SIMD_INLINE f4 splat4(float x) {
  return __builtin_shufflevector(f4{x}, f4{x}, 0, 0, 0, 0);
}
#else
typedef int i4_ __attribute__((vector_size(16)));
typedef int i8s_ __attribute__((vector_size(32)));
TV_SIMD_INLINE f8 splat8(float x) {
  return __builtin_shuffle(f8{x}, i8s_{0, 0, 0, 0, 0, 0, 0, 0});
}
TV_SIMD_INLINE f4 splat4(float x) {
  return __builtin_shuffle(f4{x}, i4_{0, 0, 0, 0});
}
#endif

// Shuffle of two f8 by constant lane indices (0-7: a, 8-15: b).
#if defined(__clang__)
#define TV_SHUFFLE8(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#else
typedef int i8_ __attribute__((vector_size(32)));
#define TV_SHUFFLE8(a, b, ...) __builtin_shuffle((a), (b), ::tv::simd::i8_{__VA_ARGS__})
#endif

// The two 4-float halves of an f8.
TV_SIMD_INLINE f4 low4(const f8& v) {
  f4 h;
  memcpy(&h, &v, sizeof h);
  return h;
}
TV_SIMD_INLINE f4 high4(const f8& v) {
  f4 h;
  memcpy(&h, (const char*)&v + sizeof h, sizeof h);
  return h;
}

// 4x4 transposes inside both halves: element (half h, vector i, lane j) moves to (half h, vector j,
// lane i).
TV_SIMD_INLINE void transpose4_halves(f8& r0, f8& r1, f8& r2, f8& r3) {
  const f8 t0 = TV_SHUFFLE8(r0, r1, 0, 8, 1, 9, 4, 12, 5, 13);
  const f8 t1 = TV_SHUFFLE8(r0, r1, 2, 10, 3, 11, 6, 14, 7, 15);
  const f8 t2 = TV_SHUFFLE8(r2, r3, 0, 8, 1, 9, 4, 12, 5, 13);
  const f8 t3 = TV_SHUFFLE8(r2, r3, 2, 10, 3, 11, 6, 14, 7, 15);
  r0 = TV_SHUFFLE8(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
  r1 = TV_SHUFFLE8(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
  r2 = TV_SHUFFLE8(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
  r3 = TV_SHUFFLE8(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
}

// 8x8 transpose: lane j of r[i] moves to lane i of r[j].
TV_SIMD_INLINE void transpose8(f8* r) {
  transpose4_halves(r[0], r[1], r[2], r[3]);
  transpose4_halves(r[4], r[5], r[6], r[7]);
  for (int i = 0; i < 4; ++i) {
    const f8 lo = TV_SHUFFLE8(r[i], r[4 + i], 0, 1, 2, 3, 8, 9, 10, 11);
    const f8 hi = TV_SHUFFLE8(r[i], r[4 + i], 4, 5, 6, 7, 12, 13, 14, 15);
    r[i] = lo;
    r[4 + i] = hi;
  }
}

// The vector of N floats (4 or 8) by its width, for kernels templated on a block size.
template <int N>
struct VecType;
template <>
struct VecType<8> {
  typedef f8 type;
};
template <>
struct VecType<4> {
  typedef f4 type;
};
template <int N>
struct Vec {
  typedef typename VecType<N>::type type;  // f8 or f4
  static inline __attribute__((always_inline)) type load(const float* p) { return load_unaligned<type>(p); }
  static inline __attribute__((always_inline)) void store(float* p, const type& v) { store_unaligned(p, v); }
  static inline __attribute__((always_inline)) type splat(float x) {
    if constexpr (N == 8)
      return splat8(x);
    else
      return splat4(x);
  }
};

// True when none of the n floats is Inf or NaN: x - x is +0 for finite x and NaN otherwise, and a
// sum of them stays +0 only if every term is. Four independent vector sums (no serial chain).
TV_SIMD_INLINE bool all_finite(const float* v, size_t n) {
  f8 acc[4] = {splat8(0.0f), splat8(0.0f), splat8(0.0f), splat8(0.0f)};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      const f8 x = load8(v + i + 8 * k);
      acc[k] += x - x;
    }
  float tail = 0.0f;
  for (; i < n; ++i) tail += v[i] - v[i];
  const f8 all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  float lanes[8];
  store8(lanes, all);
  for (int l = 0; l < 8; ++l) tail += lanes[l];
  return tail == 0.0f;
}

// True when the running CPU has 32 vector registers (AVX-512VL): the loader then runs the x86-64-v4
// clones of TV_TARGET_CLONES functions, where blocks of up to about 28 vectors stay in registers; in
// the other clones (and off x86-64) a kernel keeps the blocks that fit 16. Only the block size changes,
// never the order of any sum.
TV_SIMD_INLINE bool wide_registers() {
#if defined(__AVX512VL__)
  return true;  // the whole build targets AVX-512
#elif defined(TV_HAVE_TARGET_CLONES)
  static const bool wide = __builtin_cpu_supports("avx512vl");
  return wide;
#else
  return false;  // a build for one narrower target (e.g. -mavx2), or no x86-64
#endif
}

}  // namespace simd

// The fast kernels (tv::fast) name the vector type and its loads and stores without the prefix.
namespace fast {
using simd::f8;
using simd::load8;
using simd::splat8;
using simd::store8;
}  // namespace fast
}  // namespace tv

// A helper every fast kernel wants inlined into its AVX2 clone.
#define TV_INLINE inline __attribute__((always_inline))
