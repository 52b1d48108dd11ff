// JPEG decode and encode through libjpeg-turbo's TurboJPEG API.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace tvh {

// An interleaved (HWC) u8 image: channels 1 = gray, 3 = R, G, B.
struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;  // width * height * channels bytes
};

// Largest side and pixel count decode_jpeg accepts; bigger headers are refused before decoding.
constexpr int kMaxJpegSide = 8192;
constexpr long long kMaxJpegPixels = 40LL * 1000 * 1000;

// What a JPEG header says, read without decoding the image.
struct JpegHeader {
  int width = 0, height = 0;
  int channels = 0;   // 1 for a grayscale JPEG, 3 for a colour one (CMYK/YCCK included: decoded to RGB)
  bool cmyk = false;  // a CMYK or YCCK JPEG (print workflows)
};

// Reads the header of the JPEG in data[0 .. size); throws tvh::Error naming `name` when it is not a
// JPEG or claims a side of 0 or > kMaxJpegSide or more than kMaxJpegPixels pixels.
JpegHeader read_jpeg_header(const uint8_t* data, size_t size, const std::string& name);

// Decodes the JPEG in data[0 .. size) (baseline or progressive; gray, colour, CMYK or YCCK) into
// want_channels channels: 1 = gray, 3 = RGB, 0 = the file's own (1 for a grayscale JPEG, 3 otherwise).
// scale_denom 1, 2, 4 or 8 decodes at 1/scale_denom of the size with libjpeg-turbo's scaled DCT (each
// side rounded up). CMYK is read the way Adobe writes it (inverted): R = C * K / 255, and so on.
// Colour -> gray uses tv::luma_u8 and gray -> RGB replicates, exactly like tv::resize_nearest_crop.
// Throws tvh::Error naming `name` on a bad header (see read_jpeg_header) and on corrupt or truncated
// data (libjpeg warnings count as errors, except the harmless "extraneous bytes before marker").
Image decode_jpeg(const uint8_t* data, size_t size, const std::string& name, int want_channels, int scale_denom = 1);
Image decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& name, int want_channels);

// Converts an image to want_channels (1 = gray by tv::luma_u8, 3 = RGB by replicating gray; 0 or the
// image's own count = unchanged).
Image convert_channels(Image image, int want_channels);

// Encodes a width x height x channels (1 or 3 = RGB) image as a JPEG with 4:2:0 chroma subsampling for
// colour, quality 1..100, baseline or progressive. Throws tvh::Error on bad arguments or encoder failure.
std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int width, int height, int channels, int quality,
                                 bool progressive = false);

}  // namespace tvh
