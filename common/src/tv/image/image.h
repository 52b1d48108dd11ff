// Image preprocessing shared by the laptop tools and the ESP32 firmware: the one resize rule
// (centre crop to a square, then nearest neighbour through a lookup table; detection stretches the whole
// image by the same rule instead), channel conversion and u8 -> float normalisation. Device-safe: no
// allocation, no I/O, no exceptions; callers own every buffer.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// Channel layout of an interleaved (HWC) u8 image. RGB and BGR have 3 channels, GRAY has 1.
enum class ChannelOrder : uint8_t { RGB = 0, BGR = 1, GRAY = 2 };

// Number of channels an image in `order` has (1 for GRAY, 3 otherwise).
// "RGB", "BGR" or "GRAY".
inline const char* channel_order_name(ChannelOrder order) {
  switch (order) {
    case ChannelOrder::RGB: return "RGB";
    case ChannelOrder::BGR: return "BGR";
    case ChannelOrder::GRAY: return "GRAY";
  }
  return "?";
}
inline int channel_count(ChannelOrder order) {
  return order == ChannelOrder::GRAY ? 1 : 3;
}

// Integer luma of one RGB pixel: (77*R + 150*G + 29*B + 128) >> 8 (weights sum to 256, so 255 stays 255).
inline uint8_t luma_u8(uint8_t r, uint8_t g, uint8_t b) {
  return (uint8_t)((77u * r + 150u * g + 29u * b + 128u) >> 8);
}

// Largest source or destination side the resize accepts (its lookup table holds uint16_t).
constexpr int kMaxImageSide = 65535;

// Source index the nearest-neighbour rule picks for destination index i:
// floor((2*i + 1) * src_size / (2 * dst_size)), i.e. exactly (int)((i + 0.5) * src_size / dst_size).
// Requires 0 <= i < dst_size, src_size >= 1, dst_size >= 1.
inline int nearest_source_index(int i, int src_size, int dst_size) {
  return (int)(((2u * (uint64_t)i + 1u) * (uint64_t)src_size) / (2u * (uint64_t)dst_size));
}

// Fills lut[0 .. dst_size) with offset + nearest_source_index(i, src_size, dst_size).
// Returns false (lut untouched) when a size is out of [1, kMaxImageSide] or offset + src_size exceeds it.
bool make_resize_lut(int src_size, int dst_size, int offset, uint16_t* lut);

// Centre-crops the src_w x src_h x src_c image (src_c 1 = gray or 3 = RGB, interleaved, rows packed)
// to a square of side min(src_w, src_h) at ((src_w - side) / 2, (src_h - side) / 2), resizes it to
// dst_w x dst_h by nearest_source_index, and writes it in dst_order (gray -> RGB/BGR replicates,
// RGB -> GRAY uses luma_u8). mirror flips the output horizontally. lut_scratch must hold
// dst_w + dst_h entries. Returns false, writing nothing, on a null pointer, src_c not 1 or 3, or a
// side out of [1, kMaxImageSide].
bool resize_nearest_crop(const uint8_t* src, int src_w, int src_h, int src_c, uint8_t* dst, int dst_w, int dst_h,
                         ChannelOrder dst_order, bool mirror, uint16_t* lut_scratch);

// Resizes the whole src_w x src_h x src_c image (no crop: the aspect ratio is stretched) to dst_w x dst_h
// by nearest_source_index on each axis and writes it in dst_order, as resize_nearest_crop does. A
// position given as a fraction of the source's width and height is the same fraction of the result (the
// detection boxes' rule). lut_scratch must hold dst_w + dst_h entries. Returns false, writing nothing, on
// a null pointer, src_c not 1 or 3, or a side out of [1, kMaxImageSide].
bool resize_nearest(const uint8_t* src, int src_w, int src_h, int src_c, uint8_t* dst, int dst_w, int dst_h,
                    ChannelOrder dst_order, uint16_t* lut_scratch);

// dst[i] = (float)src[i] * scale for i < n (scale is 1/255.f for the reference preprocessing).
void normalize_u8(const uint8_t* src, size_t n, float scale, float* dst);

}  // namespace tv
