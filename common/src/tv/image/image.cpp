#include "tv/image/image.h"

namespace tv {

bool make_resize_lut(int src_size, int dst_size, int offset, uint16_t* lut) {
  if (lut == nullptr || src_size < 1 || dst_size < 1 || src_size > kMaxImageSide || dst_size > kMaxImageSide ||
      offset < 0 || offset > kMaxImageSide - src_size) {
    return false;
  }
  for (int i = 0; i < dst_size; ++i) {
    lut[i] = (uint16_t)(offset + nearest_source_index(i, src_size, dst_size));
  }
  return true;
}

namespace {

// Writes the dst_w x dst_h image whose pixel (x, y) is source pixel (lut_x[x], lut_y[y]) in dst_order
// (gray -> RGB/BGR replicates, RGB -> GRAY uses luma_u8); mirror reads lut_x backwards.
void resize_through_luts(const uint8_t* src, int src_w, int src_c, uint8_t* dst, int dst_w, int dst_h,
                         ChannelOrder dst_order, bool mirror, const uint16_t* lut_x, const uint16_t* lut_y) {
  const int dst_c = channel_count(dst_order);
  const size_t src_stride = (size_t)src_w * (size_t)src_c;
  for (int y = 0; y < dst_h; ++y) {
    const uint8_t* src_row = src + (size_t)lut_y[y] * src_stride;
    uint8_t* out = dst + (size_t)y * (size_t)dst_w * (size_t)dst_c;
    for (int x = 0; x < dst_w; ++x) {
      const int sx = lut_x[mirror ? dst_w - 1 - x : x];
      const uint8_t* p = src_row + (size_t)sx * (size_t)src_c;
      uint8_t r, g, b;
      if (src_c == 1) {
        r = g = b = p[0];
      } else {
        r = p[0];
        g = p[1];
        b = p[2];
      }
      if (dst_order == ChannelOrder::GRAY) {
        out[0] = src_c == 1 ? p[0] : luma_u8(r, g, b);
      } else if (dst_order == ChannelOrder::RGB) {
        out[0] = r;
        out[1] = g;
        out[2] = b;
      } else {
        out[0] = b;
        out[1] = g;
        out[2] = r;
      }
      out += dst_c;
    }
  }
}

// The checks both resizes make before writing anything.
bool resize_arguments_valid(const uint8_t* src, int src_w, int src_h, int src_c, const uint8_t* dst, int dst_w,
                            int dst_h, ChannelOrder dst_order, const uint16_t* lut_scratch) {
  if (src == nullptr || dst == nullptr || lut_scratch == nullptr) return false;
  if (src_c != 1 && src_c != 3) return false;
  if (dst_order != ChannelOrder::RGB && dst_order != ChannelOrder::BGR && dst_order != ChannelOrder::GRAY) {
    return false;
  }
  if (src_w < 1 || src_h < 1 || src_w > kMaxImageSide || src_h > kMaxImageSide) return false;
  if (dst_w < 1 || dst_h < 1 || dst_w > kMaxImageSide || dst_h > kMaxImageSide) return false;
  return true;
}

}  // namespace

bool resize_nearest_crop(const uint8_t* src, int src_w, int src_h, int src_c, uint8_t* dst, int dst_w, int dst_h,
                         ChannelOrder dst_order, bool mirror, uint16_t* lut_scratch) {
  if (!resize_arguments_valid(src, src_w, src_h, src_c, dst, dst_w, dst_h, dst_order, lut_scratch)) return false;
  const int side = src_w < src_h ? src_w : src_h;
  uint16_t* lut_x = lut_scratch;
  uint16_t* lut_y = lut_scratch + dst_w;
  if (!make_resize_lut(side, dst_w, (src_w - side) / 2, lut_x)) return false;
  if (!make_resize_lut(side, dst_h, (src_h - side) / 2, lut_y)) return false;
  resize_through_luts(src, src_w, src_c, dst, dst_w, dst_h, dst_order, mirror, lut_x, lut_y);
  return true;
}

bool resize_nearest(const uint8_t* src, int src_w, int src_h, int src_c, uint8_t* dst, int dst_w, int dst_h,
                    ChannelOrder dst_order, uint16_t* lut_scratch) {
  if (!resize_arguments_valid(src, src_w, src_h, src_c, dst, dst_w, dst_h, dst_order, lut_scratch)) return false;
  uint16_t* lut_x = lut_scratch;
  uint16_t* lut_y = lut_scratch + dst_w;
  if (!make_resize_lut(src_w, dst_w, 0, lut_x)) return false;
  if (!make_resize_lut(src_h, dst_h, 0, lut_y)) return false;
  resize_through_luts(src, src_w, src_c, dst, dst_w, dst_h, dst_order, false, lut_x, lut_y);
  return true;
}

void normalize_u8(const uint8_t* src, size_t n, float scale, float* dst) {
  for (size_t i = 0; i < n; ++i) dst[i] = (float)src[i] * scale;
}

}  // namespace tv
