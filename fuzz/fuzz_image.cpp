// libFuzzer target: photo loading on arbitrary bytes — JPEG (libjpeg-turbo, CMYK included), PNG
// (libpng), the EXIF orientation (the JPEG segment walk and libexif, the PNG eXIf chunk), the
// orientation transform and the scaled decode for a model input; the core's segment walk reads
// the frame size as the board does before decoding a card photo. Anything it finds must be a
// tvh::Error, never a crash, a leak or an out-of-bounds access (run with ASan and UBSan).
#include <stddef.h>
#include <stdint.h>

#include <exception>
#include <vector>

#include "host/image.h"
#include "tv/image.h"
#include "tv/jpeg_markers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
  return 0;
}
