// Photos as people keep them: JPEG (libjpeg-turbo) and PNG (libpng) decoded upright by their EXIF
// orientation (libexif), and decoded for a model input at the smallest size that still covers it.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "host/photos/jpeg.h"

namespace tvh {

// The largest image the board decodes (firmware/app/app.h kMaxDecodePixels). Images up to this size
// take exactly the board's path on the host too: full decode, then the shared nearest-LUT resize.
constexpr long long kBoardMaxDecodePixels = 1024LL * 1024;

// True for the file names a dataset reads as images: .jpg, .jpeg, .jpe, .jfif, .png in any letter case.
bool is_image_name(const std::string& name);

// For a photo or picture format that is not read (HEIC, WebP, GIF, BMP, TIFF, AVIF, camera RAW...),
// its name ("HEIC"); "" for every other name.
std::string unsupported_image_format(const std::string& name);

// The EXIF orientation (1..8) of a JPEG (APP1 "Exif" segment) or PNG (eXIf chunk) in data[0 .. size);
// 1 when there is none or it is unreadable (a bad EXIF block never makes a readable image unreadable).
int exif_orientation(const uint8_t* data, size_t size);

// The image as it should be displayed for EXIF orientation 1..8: 2 mirrors, 3 rotates 180 degrees,
// 4 flips, 5 transposes, 6 rotates 90 degrees clockwise, 7 transverses, 8 rotates 90 degrees
// counter-clockwise. 1 and values outside 1..8 return the image unchanged.
Image apply_orientation(const Image& image, int orientation);

// The background a transparent PNG is composited on: white (255, 255, 255), in 8-bit sRGB values:
// out = (value * alpha + 255 * (255 - alpha) + 127) / 255.
constexpr int kPngBackground = 255;

// Decodes a PNG (8 or 16 bits per sample, gray, RGB, palette, with or without alpha or tRNS,
// interlaced or not) into want_channels (0 = its own: 1 for gray, 3 otherwise). 16-bit samples are
// rounded to 8 bits (v * 255 / 65535); alpha is composited on kPngBackground. No EXIF is applied.
// Throws tvh::Error naming `name` when it is not a PNG, is corrupt or truncated, or claims a side
// above kMaxJpegSide or more than kMaxJpegPixels pixels.
Image decode_png(const uint8_t* data, size_t size, const std::string& name, int want_channels);

// Decodes a JPEG or PNG (told apart by content, not name) upright: its EXIF orientation is applied.
Image decode_image(const uint8_t* data, size_t size, const std::string& name, int want_channels = 0);
Image decode_image(const std::vector<uint8_t>& bytes, const std::string& name, int want_channels = 0);

// An image decoded for a model input.
struct InputImage {
  Image image;          // upright (EXIF applied), native channels (1 or 3)
  int orientation = 1;  // the EXIF orientation that was applied
  int scale_denom = 1;  // 1 = full decode, 2/4/8 = libjpeg-turbo's scaled DCT decode
};

// Decodes a JPEG or PNG upright for a dst_w x dst_h model input. A JPEG larger than
// kBoardMaxDecodePixels is decoded at the smallest scale (1/8, 1/4, 1/2) whose centre square
// (tv::resize_nearest_crop's crop) still has at least max(dst_w, dst_h) pixels per side; every other
// image is decoded at full size, exactly as the board does.
// With max_bytes > 0, an image whose decode_memory_estimate is above max_bytes is refused before any
// pixel is decoded: tvh::Error with the figures (size, format, bytes needed, the limit) and what to do.
InputImage decode_for_input(const uint8_t* data, size_t size, const std::string& name, int dst_w, int dst_h,
                            uint64_t max_bytes = 0);

// The bytes decode_for_input takes at its peak for the image in data[0 .. size), from its header alone
// (an upper bound): a JPEG's decoded picture at the scale decode_for_input picks, a progressive JPEG's
// coefficient buffers (2 bytes per pixel and component at full size) and the upright copy; a PNG's
// rows after expansion to 8-bit samples (alpha counted whenever it may appear), libpng's row buffers,
// the composited picture and the upright copy. 0 when the header cannot be read (decoding says why).
uint64_t decode_memory_estimate(const uint8_t* data, size_t size, int dst_w, int dst_h);

}  // namespace tvh
