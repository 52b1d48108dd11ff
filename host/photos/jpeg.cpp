#include "host/photos/jpeg.h"

#include <turbojpeg.h>

#include <cstring>

#include "host/base/error.h"
#include "tv/image/image.h"

namespace tvh {
namespace {

// Owns a TurboJPEG handle.
struct TjHandle {
  tjhandle h = nullptr;
  explicit TjHandle(bool compress) { h = compress ? tjInitCompress() : tjInitDecompress(); }
  ~TjHandle() {
    if (h) tjDestroy(h);
  }
  TjHandle(const TjHandle&) = delete;
  TjHandle& operator=(const TjHandle&) = delete;
};

// This thread's decompressor handle (TurboJPEG handles are not shared between threads).
TjHandle& thread_handle() {
  thread_local TjHandle tj(false);
  return tj;
}

// This thread's decompressor, made once and again after every failure (see DecoderReset).
tjhandle thread_decompressor(const std::string& name) {
  TjHandle& tj = thread_handle();
  if (!tj.h) tj.h = tjInitDecompress();
  if (!tj.h) throw Error("cannot decode '" + name + "': TurboJPEG could not be initialised.");
  return tj.h;
}

// Remakes this thread's decompressor when the scope is left without done(): libjpeg keeps a failed
// image's state (a later image then fails with "two SOI markers" or "0x0 pixels"), so each image's
// failure would become every later image's on that thread.
struct DecoderReset {
  bool ok = false;
  void done() { ok = true; }
  ~DecoderReset() {
    if (ok) return;
    TjHandle& tj = thread_handle();
    if (tj.h) tjDestroy(tj.h);
    tj.h = nullptr;  // made again by the next thread_decompressor
  }
};

std::string tj_message(tjhandle h) {
  std::string msg = tjGetErrorStr2(h);
  while (!msg.empty() && (msg.back() == '.' || msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

// libjpeg's JWRN_EXTRANEOUS_DATA: stray bytes between segments, the image itself is intact.
bool is_harmless_warning(const std::string& msg) {
  return msg.find("extraneous bytes before marker") != std::string::npos;
}

}  // namespace

JpegHeader read_jpeg_header(const uint8_t* data, size_t size, const std::string& name) {
  if (data == nullptr || size == 0) throw Error("'" + name + "' is empty, not a JPEG image.");
  if (size > (size_t)0xffffffffu) throw Error("'" + name + "' is too large to be decoded as one JPEG image.");
  DecoderReset reset;
  tjhandle tj = thread_decompressor(name);
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, data, (unsigned long)size, &width, &height, &subsamp, &colorspace) != 0) {
    throw Error("'" + name + "' is not a readable JPEG image (" + tj_message(tj) + ").");
  }
  if (width <= 0 || height <= 0 || width > kMaxJpegSide || height > kMaxJpegSide ||
      (long long)width * (long long)height > kMaxJpegPixels) {
    throw Error("'" + name + "' claims " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels, outside the accepted 1.." + std::to_string(kMaxJpegSide) + " per side and " +
                std::to_string(kMaxJpegPixels / 1000000) + " megapixels.");
  }
  JpegHeader header;
  header.width = width;
  header.height = height;
  header.channels = colorspace == TJCS_GRAY ? 1 : 3;
  header.cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  reset.done();
  return header;
}

Image convert_channels(Image image, int want_channels) {
  if (want_channels == 0 || want_channels == image.channels) return image;
  Image out;
  out.width = image.width;
  out.height = image.height;
  out.channels = want_channels;
  const size_t n = (size_t)image.width * (size_t)image.height;
  out.pixels.resize(n * (size_t)want_channels);
  const uint8_t* s = image.pixels.data();
  uint8_t* d = out.pixels.data();
  if (want_channels == 3) {
    for (size_t i = 0; i < n; ++i) d[3 * i] = d[3 * i + 1] = d[3 * i + 2] = s[i];
  } else {
    for (size_t i = 0; i < n; ++i) d[i] = tv::luma_u8(s[3 * i], s[3 * i + 1], s[3 * i + 2]);
  }
  return out;
}

Image decode_jpeg(const uint8_t* data, size_t size, const std::string& name, int want_channels, int scale_denom) {
  if (want_channels != 0 && want_channels != 1 && want_channels != 3) {
    throw Error("cannot decode '" + name + "' into " + std::to_string(want_channels) +
                " channels: only 1 (gray) or 3 (RGB) are supported.");
  }
  if (scale_denom != 1 && scale_denom != 2 && scale_denom != 4 && scale_denom != 8) {
    throw Error("cannot decode '" + name + "' at 1/" + std::to_string(scale_denom) + " scale: only 1, 1/2, 1/4, 1/8.");
  }
  const JpegHeader header = read_jpeg_header(data, size, name);
  const int decoded_channels = header.cmyk ? 4 : header.channels;
  const int pixel_format = header.cmyk ? TJPF_CMYK : header.channels == 1 ? TJPF_GRAY : TJPF_RGB;
  const tjscalingfactor factor{1, scale_denom};
  const int width = TJSCALED(header.width, factor), height = TJSCALED(header.height, factor);

  std::vector<uint8_t> decoded((size_t)width * (size_t)height * (size_t)decoded_channels);
  DecoderReset reset;
  tjhandle tj = thread_decompressor(name);
  // First pass stops at the first libjpeg warning, so a warning about corrupt or truncated data is
  // never masked by a later one. Only the harmless "extraneous bytes" warning earns a second pass.
  // Scaled decodes are never compared with the board's: they may take the fast chroma upsampling.
  int flags = TJFLAG_STOPONWARNING | (scale_denom > 1 ? TJFLAG_FASTUPSAMPLE : 0);
  for (int pass = 0; pass < 2; ++pass) {
    const int rc = tjDecompress2(tj, data, (unsigned long)size, decoded.data(), width, 0, height, pixel_format, flags);
    if (rc == 0) break;
    const std::string msg = tj_message(tj);
    const bool warning = tjGetErrorCode(tj) == TJERR_WARNING;
    if (warning && is_harmless_warning(msg) && pass == 0) {
      flags &= ~TJFLAG_STOPONWARNING;  // decode again, letting harmless warnings pass
      continue;
    }
    if (warning && is_harmless_warning(msg)) break;
    const bool truncated = msg.find("Premature end") != std::string::npos;
    throw Error("'" + name + "' is " + (truncated ? "truncated" : "corrupt") + " and cannot be decoded (" + msg + ").");
  }
  reset.done();

  Image native;
  native.width = width;
  native.height = height;
  native.channels = header.channels;
  if (header.cmyk) {
    // Adobe's inverted CMYK, as TurboJPEG hands it over: 255 = no ink.
    const size_t n = (size_t)width * (size_t)height;
    native.pixels.resize(n * 3);
    for (size_t i = 0; i < n; ++i) {
      const unsigned k = decoded[4 * i + 3];
      for (int c = 0; c < 3; ++c) native.pixels[3 * i + c] = (uint8_t)((decoded[4 * i + c] * k + 127u) / 255u);
    }
  } else {
    native.pixels = std::move(decoded);
  }
  return convert_channels(std::move(native), want_channels);
}

Image decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& name, int want_channels) {
  return decode_jpeg(bytes.data(), bytes.size(), name, want_channels);
}

std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int width, int height, int channels, int quality,
                                 bool progressive) {
  if (pixels == nullptr || width < 1 || height < 1 || width > 65535 || height > 65535) {
    throw Error("cannot encode a JPEG of " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels: the size must be 1..65535 per side.");
  }
  if (channels != 1 && channels != 3) {
    throw Error("cannot encode a JPEG with " + std::to_string(channels) + " channels: only 1 or 3 are supported.");
  }
  if (quality < 1 || quality > 100) {
    throw Error("cannot encode a JPEG at quality " + std::to_string(quality) + ": it must be 1..100.");
  }
  TjHandle tj(true);
  if (!tj.h) throw Error("cannot encode a JPEG: TurboJPEG could not be initialised.");
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const int flags = progressive ? TJFLAG_PROGRESSIVE : 0;
  const int rc = tjCompress2(tj.h, pixels, width, 0, height, channels == 1 ? TJPF_GRAY : TJPF_RGB, &out, &out_size,
                             channels == 1 ? TJSAMP_GRAY : TJSAMP_420, quality, flags);
  if (rc != 0) {
    const std::string msg = tj_message(tj.h);
    if (out) tjFree(out);
    throw Error("JPEG encoding failed (" + msg + ").");
  }
  std::vector<uint8_t> bytes(out, out + out_size);
  tjFree(out);
  return bytes;
}

}  // namespace tvh
