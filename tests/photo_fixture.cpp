#include "photo_fixture.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <map>
#include <stdexcept>

namespace tvtest {
namespace {

void append_png_bytes(png_structp png, png_bytep data, size_t n) {
  auto* out = (std::vector<uint8_t>*)png_get_io_ptr(png);
  out->insert(out->end(), data, data + n);
}
void flush_nothing(png_structp) {}

void put16(std::vector<uint8_t>& v, unsigned x, bool be) {
  if (be) {
    v.push_back((uint8_t)(x >> 8));
    v.push_back((uint8_t)x);
  } else {
    v.push_back((uint8_t)x);
    v.push_back((uint8_t)(x >> 8));
  }
}
void put32(std::vector<uint8_t>& v, uint32_t x, bool be) {
  if (be) {
    put16(v, x >> 16, true);
    put16(v, x & 0xFFFF, true);
  } else {
    put16(v, x & 0xFFFF, false);
    put16(v, x >> 16, false);
  }
}

// Writes the PNG with libpng; false on a libpng error (the frame holds no C++ object made after setjmp).
bool write_png(std::vector<uint8_t>* out, const std::vector<uint8_t>* rows_data, size_t row_bytes, int width,
               int height, int color_type, int bit_depth, const std::vector<png_color>* palette,
               const std::vector<png_byte>* trns, const std::vector<uint8_t>* exif, bool interlaced) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, out, append_png_bytes, flush_nothing);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, bit_depth, color_type,
               interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (palette) png_set_PLTE(png, info, palette->data(), (int)palette->size());
  if (trns) png_set_tRNS(png, info, trns->data(), (int)trns->size(), nullptr);
  if (exif) png_set_eXIf_1(png, info, (png_uint_32)exif->size(), (png_bytep)exif->data());
  png_write_info(png, info);
  std::vector<png_bytep> rows((size_t)height);
  for (int y = 0; y < height; ++y) rows[(size_t)y] = (png_bytep)rows_data->data() + (size_t)y * row_bytes;
  png_write_image(png, rows.data());
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

std::vector<uint8_t> encode_png(const std::vector<uint8_t>& rgba, int width, int height, PngKind kind, int bit_depth,
                                int exif_orientation, bool interlaced) {
  if (rgba.size() != (size_t)width * (size_t)height * 4) throw std::runtime_error("encode_png: wrong pixel count");
  const bool palette_kind = kind == PngKind::Palette || kind == PngKind::PaletteTrns;
  if (bit_depth != 8 && (bit_depth != 16 || palette_kind)) throw std::runtime_error("encode_png: bad bit depth");
  int samples = 0, color_type = 0;
  switch (kind) {
    case PngKind::Gray: samples = 1, color_type = PNG_COLOR_TYPE_GRAY; break;
    case PngKind::GrayAlpha: samples = 2, color_type = PNG_COLOR_TYPE_GRAY_ALPHA; break;
    case PngKind::Rgb: samples = 3, color_type = PNG_COLOR_TYPE_RGB; break;
    case PngKind::Rgba: samples = 4, color_type = PNG_COLOR_TYPE_RGBA; break;
    default: samples = 1, color_type = PNG_COLOR_TYPE_PALETTE; break;
  }
  const int bytes_per_sample = bit_depth / 8;
  const size_t row_bytes = (size_t)width * (size_t)samples * (size_t)bytes_per_sample;
  std::vector<uint8_t> data(row_bytes * (size_t)height);
  std::vector<png_color> palette;
  std::vector<png_byte> trns;
  std::map<uint32_t, int> index_of;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const uint8_t* p = &rgba[((size_t)y * width + x) * 4];
      uint8_t* d = &data[(size_t)y * row_bytes + (size_t)x * samples * bytes_per_sample];
      if (palette_kind) {
        const uint32_t key = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
                             (kind == PngKind::PaletteTrns ? p[3] : 255u);
        auto it = index_of.find(key);
        if (it == index_of.end()) {
          if (palette.size() == 256) throw std::runtime_error("encode_png: more than 256 colours");
          it = index_of.emplace(key, (int)palette.size()).first;
          palette.push_back(png_color{p[0], p[1], p[2]});
          trns.push_back((png_byte)(key & 0xFF));
        }
        d[0] = (uint8_t)it->second;
        continue;
      }
      const uint8_t values[4] = {p[0], p[1], p[2], p[3]};
      const int pick[4][4] = {{0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
      for (int s = 0; s < samples; ++s) {
        const uint8_t v = values[pick[samples - 1][s]];
        if (bit_depth == 8) {
          d[s] = v;
        } else {  // 16-bit big-endian, v * 257 so that the 8-bit value is exact
          d[2 * s] = v;
          d[2 * s + 1] = v;
        }
      }
    }
  }
  std::vector<uint8_t> exif;
  if (exif_orientation) exif = exif_tiff_block(exif_orientation);
  std::vector<uint8_t> out;
  if (!write_png(&out, &data, row_bytes, width, height, color_type, bit_depth, palette_kind ? &palette : nullptr,
                 kind == PngKind::PaletteTrns ? &trns : nullptr, exif_orientation ? &exif : nullptr, interlaced)) {
    throw std::runtime_error("encode_png: libpng failed");
  }
  return out;
}

std::vector<uint8_t> exif_tiff_block(int orientation, bool be) {
  std::vector<uint8_t> t;
  t.push_back(be ? 'M' : 'I');
  t.push_back(be ? 'M' : 'I');
  put16(t, 42, be);
  put32(t, 8, be);  // offset of IFD0
  put16(t, 1, be);  // one entry
  put16(t, 0x0112, be);
  put16(t, 3, be);  // SHORT
  put32(t, 1, be);
  put16(t, (unsigned)orientation, be);
  put16(t, 0, be);
  put32(t, 0, be);  // no next IFD
  return t;
}

std::vector<uint8_t> with_exif_orientation(const std::vector<uint8_t>& jpeg, int orientation, bool big_endian) {
  const std::vector<uint8_t> tiff = exif_tiff_block(orientation, big_endian);
  std::vector<uint8_t> seg = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
  seg.insert(seg.end(), tiff.begin(), tiff.end());
  const size_t len = seg.size() - 2;
  seg[2] = (uint8_t)(len >> 8);
  seg[3] = (uint8_t)len;
  std::vector<uint8_t> out;
  out.reserve(jpeg.size() + seg.size());
  out.push_back(jpeg.at(0));
  out.push_back(jpeg.at(1));
  out.insert(out.end(), seg.begin(), seg.end());
  out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
  return out;
}

std::vector<uint8_t> quadrant_picture(int width, int height, bool top_left) {
  std::vector<uint8_t> px((size_t)width * height * 3, 30);
  const int side = width < height ? width : height;
  const int x0 = (width - side) / 2, y0 = (height - side) / 2, half = side / 2;
  const int bx = top_left ? x0 : x0 + half, by = top_left ? y0 : y0 + half;
  for (int y = by; y < by + half; ++y) {
    for (int x = bx; x < bx + half; ++x) {
      uint8_t* p = &px[((size_t)y * width + x) * 3];
      p[0] = 240;
      p[1] = 230;
      p[2] = 220;
    }
  }
  return px;
}

std::vector<uint8_t> stored_for_orientation(const std::vector<uint8_t>& d, int dw, int dh, int c, int o) {
  // EXIF's definition: which side of the displayed picture the stored 0th row and 0th column are.
  const bool swap = o >= 5;
  const int sw = swap ? dh : dw, sh = swap ? dw : dh;
  std::vector<uint8_t> s(d.size());
  for (int r = 0; r < sh; ++r) {
    for (int col = 0; col < sw; ++col) {
      int x = col, y = r;
      switch (o) {
        case 2: x = dw - 1 - col, y = r; break;           // top, right
        case 3: x = dw - 1 - col, y = dh - 1 - r; break;  // bottom, right
        case 4: x = col, y = dh - 1 - r; break;           // bottom, left
        case 5: x = r, y = col; break;                    // left, top
        case 6: x = dw - 1 - r, y = col; break;           // right, top
        case 7: x = dw - 1 - r, y = dh - 1 - col; break;  // right, bottom
        case 8: x = r, y = dh - 1 - col; break;           // left, bottom
        default: break;
      }
      std::memcpy(&s[((size_t)r * sw + col) * c], &d[((size_t)y * dw + x) * c], (size_t)c);
    }
  }
  return s;
}

int bright_quadrant(const uint8_t* px, int w, int h, int c) {
  double sum[4] = {0, 0, 0, 0};
  int n[4] = {0, 0, 0, 0};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int q = (y >= h / 2 ? 2 : 0) + (x >= w / 2 ? 1 : 0);
      sum[q] += px[((size_t)y * w + x) * c];
      ++n[q];
    }
  }
  int best = -1;
  for (int q = 0; q < 4; ++q) {
    const double mean = sum[q] / (n[q] ? n[q] : 1);
    if (mean > 170) {
      if (best >= 0) return -1;
      best = q;
    } else if (mean > 90) {
      return -1;
    }
  }
  return best;
}

std::vector<uint8_t> encode_cmyk_jpeg(const std::vector<uint8_t>& rgb, int w, int h) {
  std::vector<uint8_t> cmyk((size_t)w * h * 4);
  for (size_t i = 0; i < (size_t)w * h; ++i) {
    // Inverted CMYK (Adobe): K = max(R, G, B); C = R * 255 / K, so that R = C * K / 255.
    const int k = std::max<int>(rgb[3 * i], std::max(rgb[3 * i + 1], rgb[3 * i + 2]));
    cmyk[4 * i + 3] = (uint8_t)k;
    for (int ch = 0; ch < 3; ++ch) cmyk[4 * i + ch] = (uint8_t)(k ? (rgb[3 * i + ch] * 255 + k / 2) / k : 0);
  }
  tjhandle tj = tjInitCompress();
  if (!tj) throw std::runtime_error("encode_cmyk_jpeg: TurboJPEG init failed");
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const int rc = tjCompress2(tj, cmyk.data(), w, 0, h, TJPF_CMYK, &out, &out_size, TJSAMP_444, 95, 0);
  tjDestroy(tj);
  if (rc != 0) throw std::runtime_error("encode_cmyk_jpeg: TurboJPEG failed");
  std::vector<uint8_t> bytes(out, out + out_size);
  tjFree(out);
  return bytes;
}

std::vector<uint8_t> to_rgba(const std::vector<uint8_t>& rgb, int w, int h) {
  std::vector<uint8_t> out((size_t)w * h * 4);
  for (size_t i = 0; i < (size_t)w * h; ++i) {
    for (int c = 0; c < 3; ++c) out[4 * i + c] = rgb[3 * i + c];
    out[4 * i + 3] = 255;
  }
  return out;
}

}  // namespace tvtest
