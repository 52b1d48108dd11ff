// libFuzzer target: photo loading on arbitrary bytes — JPEG (libjpeg-turbo, CMYK included), PNG
// (libpng), the EXIF orientation (the JPEG segment walk and libexif, the PNG eXIf chunk), the
// orientation transform and the scaled decode for a model input; the core's segment walk reads
// the frame size as the board does before decoding a card photo. Anything it finds must be a
// tvh::Error, never a crash, a leak or an out-of-bounds access (run with ASan and UBSan). Every input
// goes through this thread's one decoder, and a known good JPEG is decoded after it: one image's failure
// must stay its own (a malformed header once left the decoder failing every later image).
#include <stddef.h>
#include <stdint.h>

#include <exception>
#include <vector>

#include "host/photos/image.h"
#include "host/photos/jpeg.h"
#include "tv/image/image.h"
#include "tv/image/jpeg_markers.h"

namespace {

// A small good JPEG and its decoded pixels, made once.
struct GoodJpeg {
  std::vector<uint8_t> bytes;
  tvh::Image decoded;
  GoodJpeg() {
    std::vector<uint8_t> px(24 * 16 * 3);
    for (size_t i = 0; i < px.size(); ++i) px[i] = (uint8_t)(i * 13);
    bytes = tvh::encode_jpeg(px.data(), 24, 16, 3, 90);
    decoded = tvh::decode_jpeg(bytes, "good", 3);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const GoodJpeg good;
  (void)tvh::exif_orientation(data, size);
  tv::JpegSegments segments(data, size);
  tv::JpegSegment s;
  while (segments.next(&s))
    if (s.payload < data || s.payload + s.size > data + size) __builtin_trap();
  try {
    const tvh::Image img = tvh::decode_image(data, size, "fuzz", 0);
    if (img.pixels.size() != (size_t)img.width * img.height * img.channels) __builtin_trap();
  } catch (const std::exception&) {
  }
  try {
    const tvh::InputImage in = tvh::decode_for_input(data, size, "fuzz", 16, 12);
    std::vector<uint8_t> out(16 * 12 * 3);
    uint16_t lut[28];
    if (!tv::resize_nearest_crop(in.image.pixels.data(), in.image.width, in.image.height, in.image.channels, out.data(),
                                 16, 12, tv::ChannelOrder::RGB, false, lut)) {
      __builtin_trap();
    }
  } catch (const std::exception&) {
  }
  try {  // good after bad, on the same thread's decoder
    if (tvh::decode_jpeg(good.bytes, "good", 3).pixels != good.decoded.pixels) __builtin_trap();
  } catch (const std::exception&) {
    __builtin_trap();
  }
  return 0;
}
