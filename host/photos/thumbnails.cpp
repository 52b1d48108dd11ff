#include "host/photos/thumbnails.h"

#include <algorithm>
#include <filesystem>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/image.h"

namespace tvh {

std::string base64(const std::vector<uint8_t>& bytes) {
  static const char* const kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = bytes[i], b1 = i + 1 < bytes.size() ? bytes[i + 1] : 0,
                   b2 = i + 2 < bytes.size() ? bytes[i + 2] : 0;
    const uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

std::string jpeg_data_uri(const std::vector<uint8_t>& jpeg) {
  return "data:image/jpeg;base64," + base64(jpeg);
}

Image shrink_to_fit(const Image& image, int max_side) {
  const int longer = std::max(image.width, image.height);
  if (longer <= max_side || max_side < 1) return image;
  Image out;
  out.width = std::max(1, (int)((int64_t)image.width * max_side / longer));
  out.height = std::max(1, (int)((int64_t)image.height * max_side / longer));
  out.channels = image.channels;
  out.pixels.resize((size_t)out.width * (size_t)out.height * (size_t)out.channels);
  const int c = image.channels;
  for (int y = 0; y < out.height; ++y) {
    const int y0 = (int)((int64_t)y * image.height / out.height),
              y1 = std::max(y0 + 1, (int)((int64_t)(y + 1) * image.height / out.height));
    for (int x = 0; x < out.width; ++x) {
      const int x0 = (int)((int64_t)x * image.width / out.width),
                x1 = std::max(x0 + 1, (int)((int64_t)(x + 1) * image.width / out.width));
      for (int k = 0; k < c; ++k) {
        uint64_t sum = 0;
        for (int sy = y0; sy < y1; ++sy) {
          const uint8_t* row = image.pixels.data() + ((size_t)sy * (size_t)image.width) * (size_t)c;
          for (int sx = x0; sx < x1; ++sx) sum += row[(size_t)sx * (size_t)c + (size_t)k];
        }
        const uint64_t n = (uint64_t)(y1 - y0) * (uint64_t)(x1 - x0);
        out.pixels[((size_t)y * (size_t)out.width + (size_t)x) * (size_t)c + (size_t)k] = (uint8_t)((sum + n / 2) / n);
      }
    }
  }
  return out;
}

std::string ThumbnailMaker::admit(const std::vector<uint8_t>& jpeg) {
  const size_t cost = (jpeg.size() + 2) / 3 * 4 + 32;
  if (spent_ + cost > budget_) {
    ++left_out_;
    why_ = "(picture left out: the report's size budget)";
    return "";
  }
  spent_ += cost;
  return jpeg_data_uri(jpeg);
}

std::string ThumbnailMaker::original(size_t i) {
  const std::string& path = ds_.paths[i];
  if (spent_ >= budget_) {
    ++left_out_;
    why_ = "(picture left out: the report's size budget)";
    return "";
  }
  why_ = "(the original photo could not be read again)";
  try {
    // Inside a zip the path reads "archive.zip:inner/path": not a file to open again.
    if (!std::filesystem::is_directory(ds_.source) || non_regular_kind(path) != "") return "";
    const std::vector<uint8_t> bytes = read_file(path, size_t(64) << 20);
    const InputImage in = decode_for_input(bytes.data(), bytes.size(), path, 4 * max_side_, 4 * max_side_);
    const Image small = shrink_to_fit(in.image, max_side_);
    return admit(encode_jpeg(small.pixels.data(), small.width, small.height, small.channels, 75));
  } catch (const std::exception&) {
    return "";
  }
}

std::string ThumbnailMaker::model_input(size_t i) {
  const uint8_t* px = ds_.image(i);
  std::vector<uint8_t> rgb(px, px + ds_.image_bytes());
  if (ds_.channels == 3 && ds_.order == tv::ChannelOrder::BGR) {
    for (size_t p = 0; p + 2 < rgb.size(); p += 3) std::swap(rgb[p], rgb[p + 2]);
  }
  return admit(encode_jpeg(rgb.data(), ds_.width, ds_.height, ds_.channels, 90));
}

}  // namespace tvh
