#include "host/photos/image.h"

#include <libexif/exif-data.h>
#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "host/base/error.h"
#include "tv/image/jpeg_markers.h"

namespace tvh {
namespace {

std::string lower_extension(const std::string& name) {
  const size_t slash = name.find_last_of('/');
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = name.substr(dot + 1);
  for (char& ch : ext) ch = (char)std::tolower((unsigned char)ch);
  return ext;
}

bool starts_with(const uint8_t* data, size_t size, const char* magic, size_t n, size_t at = 0) {
  return size >= at + n && std::memcmp(data + at, magic, n) == 0;
}

bool is_jpeg_data(const uint8_t* data, size_t size) {
  return size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF;
}

bool is_png_data(const uint8_t* data, size_t size) {
  return starts_with(data, size, "\x89PNG\r\n\x1a\n", 8);
}

// The format of a file that is neither JPEG nor PNG, from its first bytes ("" when unknown).
std::string sniff_other_format(const uint8_t* data, size_t size) {
  if (starts_with(data, size, "GIF8", 4)) return "GIF";
  if (starts_with(data, size, "BM", 2)) return "BMP";
  if (starts_with(data, size, "RIFF", 4) && starts_with(data, size, "WEBP", 4, 8)) return "WebP";
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4)) return "TIFF";
  if (starts_with(data, size, "ftyp", 4, 4)) {
    if (starts_with(data, size, "avif", 4, 8) || starts_with(data, size, "avis", 4, 8)) return "AVIF";
    if (starts_with(data, size, "hei", 3, 8) || starts_with(data, size, "mif1", 4, 8) ||
        starts_with(data, size, "msf1", 4, 8) || starts_with(data, size, "hev", 3, 8)) {
      return "HEIC";
    }
  }
  return "";
}

// The payload of a JPEG's APP1 "Exif\0\0" segment (header included), found by walking the marker
// segments up to the start of the scan; false when there is none.
bool find_jpeg_exif(const uint8_t* d, size_t n, const uint8_t** out, size_t* out_size) {
  tv::JpegSegments segments(d, n);
  tv::JpegSegment s;
  while (segments.next(&s)) {
    if (s.marker == 0xE1 && s.size >= 6 + 8 && std::memcmp(s.payload, "Exif\0\0", 6) == 0) {
      *out = s.payload;
      *out_size = s.size;
      return true;
    }
  }
  return false;
}

// The orientation tag of an EXIF block that starts with "Exif\0\0"; 1 when absent or invalid.
int orientation_of_exif_block(const uint8_t* block, size_t size) {
  ExifData* ed = exif_data_new();
  if (!ed) return 1;
  // Read as found: no "fixing" of the block to the specification, no maker notes needed.
  exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
  exif_data_load_data(ed, block, (unsigned int)std::min<size_t>(size, 0xFFFFFFFFu));
  int orientation = 1;
  ExifEntry* e = exif_content_get_entry(ed->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
  if (e && e->format == EXIF_FORMAT_SHORT && e->components >= 1 && e->data && e->size >= 2) {
    const int v = exif_get_short(e->data, exif_data_get_byte_order(ed));
    if (v >= 1 && v <= 8) orientation = v;
  }
  exif_data_unref(ed);
  return orientation;
}

// ---- PNG through libpng (errors come back through setjmp/longjmp, so no C++ object lives in the
// frame that calls setjmp except those made before it) ----

struct PngJob {
  const uint8_t* data = nullptr;
  size_t size = 0, pos = 0;
  // Results, valid when png_run returns true: channels 1 (gray), 2 (gray+alpha), 3 (RGB), 4 (RGBA).
  png_uint_32 width = 0, height = 0;
  int channels = 0;
  unsigned char* pixels = nullptr;  // malloc'd, width * height * channels
  png_bytep* rows = nullptr;        // malloc'd
  unsigned char* exif = nullptr;    // malloc'd copy of the eXIf chunk (a TIFF block)
  size_t exif_size = 0;
  bool image_read = false;
  char error[256] = {0};
  ~PngJob() {
    std::free(pixels);
    std::free(rows);
    std::free(exif);
  }
};

void png_read_from_job(png_structp png, png_bytep out, size_t n) {
  PngJob* job = (PngJob*)png_get_io_ptr(png);
  if (n > job->size - job->pos) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, job->data + job->pos, n);
  job->pos += n;
}

void png_error_to_job(png_structp png, png_const_charp msg) {
  PngJob* job = (PngJob*)png_get_error_ptr(png);
  std::snprintf(job->error, sizeof job->error, "%s", msg ? msg : "libpng error");
  png_longjmp(png, 1);
}

void png_ignore_warning(png_structp, png_const_charp) {}

// Reads the PNG of `job`; false with job->error set on failure.
bool png_run(PngJob* job) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, png_error_to_job, png_ignore_warning);
  if (!png) {
    std::snprintf(job->error, sizeof job->error, "libpng could not be initialised");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(job->error, sizeof job->error, "libpng could not be initialised");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return job->image_read;  // a damaged chunk after the image data costs only the metadata
  }
  png_set_read_fn(png, job, png_read_from_job);
  png_set_user_limits(png, kMaxJpegSide, kMaxJpegSide);
  png_set_chunk_cache_max(png, 1000);
  png_set_chunk_malloc_max(png, 8u << 20);
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  if ((long long)width * (long long)height > kMaxJpegPixels) png_error(png, "too many pixels");
  job->width = width;
  job->height = height;
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (bit_depth == 16) png_set_scale_16(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  job->channels = png_get_channels(png, info);
  const size_t rowbytes = png_get_rowbytes(png, info);
  if (job->channels < 1 || job->channels > 4 || rowbytes != (size_t)width * (size_t)job->channels) {
    png_error(png, "unexpected pixel layout");
  }
  job->pixels = (unsigned char*)std::malloc(rowbytes * height);
  job->rows = (png_bytep*)std::malloc(sizeof(png_bytep) * height);
  if (!job->pixels || !job->rows) png_error(png, "out of memory");
  for (png_uint_32 y = 0; y < height; ++y) job->rows[y] = job->pixels + (size_t)y * rowbytes;
  png_read_image(png, job->rows);
  job->image_read = true;
  png_read_end(png, info);  // chunks after the image data may hold the eXIf chunk
  png_uint_32 exif_size = 0;
  png_bytep exif = nullptr;
  if (png_get_eXIf_1(png, info, &exif_size, &exif) && exif && exif_size > 0) {
    job->exif = (unsigned char*)std::malloc(exif_size);
    if (job->exif) {
      std::memcpy(job->exif, exif, exif_size);
      job->exif_size = exif_size;
    }
  }
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

int orientation_of_png_exif(const PngJob& job) {
  if (!job.exif || job.exif_size < 8) return 1;
  std::vector<uint8_t> block(6 + job.exif_size);
  std::memcpy(block.data(), "Exif\0\0", 6);
  std::memcpy(block.data() + 6, job.exif, job.exif_size);
  return orientation_of_exif_block(block.data(), block.size());
}

// Runs a PNG job, throwing the sentence for a failure. A size outside the accepted one is said from the
// IHDR bytes first (libpng reports it only as "Invalid IHDR data").
void run_png_or_throw(PngJob& job, const std::string& name) {
  if (job.size >= 24 && std::memcmp(job.data + 12, "IHDR", 4) == 0) {
    auto be32 = [&](size_t at) {
      return ((png_uint_32)job.data[at] << 24) | ((png_uint_32)job.data[at + 1] << 16) |
             ((png_uint_32)job.data[at + 2] << 8) | job.data[at + 3];
    };
    job.width = be32(16);
    job.height = be32(20);
    if (job.width > (png_uint_32)kMaxJpegSide || job.height > (png_uint_32)kMaxJpegSide ||
        (long long)job.width * (long long)job.height > kMaxJpegPixels)
      std::snprintf(job.error, sizeof job.error, "too many pixels");
  }
  if (job.error[0] || !png_run(&job)) {
    const std::string msg = job.error;
    if (msg == "too many pixels" || msg.find("exceeds user limit") != std::string::npos ||
        msg.find("Image width is too large") != std::string::npos ||
        msg.find("Image height is too large") != std::string::npos) {
      throw Error("'" + name + "' claims " + std::to_string(job.width) + "x" + std::to_string(job.height) +
                  " pixels or more, outside the accepted 1.." + std::to_string(kMaxJpegSide) + " per side and " +
                  std::to_string(kMaxJpegPixels / 1000000) + " megapixels: scale it down to use it.");
    }
    if (msg == "out of memory" || msg.find("memory") != std::string::npos)
      throw Error("'" + name + "' (" + std::to_string(job.width) + "x" + std::to_string(job.height) +
                  " pixels) could not be given the memory to decode: scale it down, save it as JPEG, or decode with "
                  "fewer --threads.");
    const bool truncated = msg.find("truncated") != std::string::npos;
    throw Error("'" + name + "' is " + (truncated ? "truncated" : "a corrupt PNG") + " and cannot be decoded (" + msg +
                ").");
  }
}

Image png_to_image(const PngJob& job) {
  Image out;
  out.width = (int)job.width;
  out.height = (int)job.height;
  const bool alpha = job.channels == 2 || job.channels == 4;
  out.channels = alpha ? job.channels - 1 : job.channels;
  const size_t n = (size_t)job.width * (size_t)job.height;
  if (!alpha) {
    out.pixels.assign(job.pixels, job.pixels + n * (size_t)job.channels);
    return out;
  }
  out.pixels.resize(n * (size_t)out.channels);
  const int c = out.channels;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* s = job.pixels + i * (size_t)job.channels;
    const unsigned a = s[c];
    for (int k = 0; k < c; ++k) {
      out.pixels[i * (size_t)c + (size_t)k] =
          (uint8_t)((s[k] * a + (unsigned)kPngBackground * (255u - a) + 127u) / 255u);
    }
  }
  return out;
}

// Throws the "not JPEG or PNG" sentence for data that is neither.
[[noreturn]] void throw_not_an_image(const uint8_t* data, size_t size, const std::string& name) {
  if (size == 0) throw Error("'" + name + "' is empty, not an image.");
  const std::string other = sniff_other_format(data, size);
  if (!other.empty()) {
    throw Error("'" + name + "' is a " + other + " image, which is not read: convert it to JPEG or PNG.");
  }
  throw Error("'" + name + "' is neither a JPEG nor a PNG image (unrecognised content).");
}

}  // namespace

bool is_image_name(const std::string& name) {
  const std::string ext = lower_extension(name);
  return ext == "jpg" || ext == "jpeg" || ext == "jpe" || ext == "jfif" || ext == "png";
}

std::string unsupported_image_format(const std::string& name) {
  static const char* const kFormats[][2] = {
      {"heic", "HEIC"},     {"heif", "HEIF"},     {"webp", "WebP"},     {"gif", "GIF"},       {"bmp", "BMP"},
      {"tif", "TIFF"},      {"tiff", "TIFF"},     {"avif", "AVIF"},     {"jxl", "JPEG XL"},   {"jp2", "JPEG 2000"},
      {"j2k", "JPEG 2000"}, {"dng", "DNG (raw)"}, {"cr2", "CR2 (raw)"}, {"cr3", "CR3 (raw)"}, {"nef", "NEF (raw)"},
      {"arw", "ARW (raw)"}, {"orf", "ORF (raw)"}, {"rw2", "RW2 (raw)"}, {"raf", "RAF (raw)"}, {"psd", "PSD"},
      {"svg", "SVG"},       {"ico", "ICO"},       {"tga", "TGA"},       {"ppm", "PPM"},       {"pgm", "PGM"},
  };
  const std::string ext = lower_extension(name);
  for (const auto& f : kFormats) {
    if (ext == f[0]) return f[1];
  }
  return "";
}

int exif_orientation(const uint8_t* data, size_t size) {
  if (data == nullptr) return 1;
  if (is_jpeg_data(data, size)) {
    const uint8_t* block = nullptr;
    size_t block_size = 0;
    return find_jpeg_exif(data, size, &block, &block_size) ? orientation_of_exif_block(block, block_size) : 1;
  }
  if (is_png_data(data, size)) {
    PngJob job;
    job.data = data;
    job.size = size;
    if (!png_run(&job)) return 1;
    return orientation_of_png_exif(job);
  }
  return 1;
}

Image apply_orientation(const Image& in, int orientation) {
  if (orientation < 2 || orientation > 8) return in;
  const int w = in.width, h = in.height, c = in.channels;
  const bool swap = orientation >= 5;
  Image out;
  out.width = swap ? h : w;
  out.height = swap ? w : h;
  out.channels = c;
  out.pixels.resize(in.pixels.size());
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      int sx = x, sy = y;
      switch (orientation) {
        case 2: sx = w - 1 - x; break;
        case 3:
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;
        case 4: sy = h - 1 - y; break;
        case 5:
          sx = y;
          sy = x;
          break;
        case 6:
          sx = y;
          sy = h - 1 - x;
          break;
        case 7:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;
        case 8:
          sx = w - 1 - y;
          sy = x;
          break;
        default: break;
      }
      std::memcpy(&out.pixels[((size_t)y * (size_t)out.width + (size_t)x) * (size_t)c],
                  &in.pixels[((size_t)sy * (size_t)w + (size_t)sx) * (size_t)c], (size_t)c);
    }
  }
  return out;
}

Image decode_png(const uint8_t* data, size_t size, const std::string& name, int want_channels) {
  if (want_channels != 0 && want_channels != 1 && want_channels != 3) {
    throw Error("cannot decode '" + name + "' into " + std::to_string(want_channels) +
                " channels: only 1 (gray) or 3 (RGB) are supported.");
  }
  if (data == nullptr || !is_png_data(data, size)) throw Error("'" + name + "' is not a PNG image.");
  PngJob job;
  job.data = data;
  job.size = size;
  run_png_or_throw(job, name);
  return convert_channels(png_to_image(job), want_channels);
}

Image decode_image(const uint8_t* data, size_t size, const std::string& name, int want_channels) {
  if (want_channels != 0 && want_channels != 1 && want_channels != 3) {
    throw Error("cannot decode '" + name + "' into " + std::to_string(want_channels) +
                " channels: only 1 (gray) or 3 (RGB) are supported.");
  }
  if (data == nullptr || size == 0) throw_not_an_image(data, 0, name);
  if (is_jpeg_data(data, size)) {
    return convert_channels(apply_orientation(decode_jpeg(data, size, name, 0), exif_orientation(data, size)),
                            want_channels);
  }
  if (is_png_data(data, size)) {
    PngJob job;
    job.data = data;
    job.size = size;
    run_png_or_throw(job, name);
    return convert_channels(apply_orientation(png_to_image(job), orientation_of_png_exif(job)), want_channels);
  }
  throw_not_an_image(data, size, name);
}

Image decode_image(const std::vector<uint8_t>& bytes, const std::string& name, int want_channels) {
  return decode_image(bytes.data(), bytes.size(), name, want_channels);
}

namespace {

// The scaled-DCT denominator decode_for_input decodes a width x height JPEG at for a dst_w x dst_h
// input: 1 up to the board's size, else the smallest scale whose centre square still covers it.
int jpeg_scale_for(int width, int height, int dst_w, int dst_h) {
  if ((long long)width * height <= kBoardMaxDecodePixels) return 1;
  const int need = std::max(dst_w, dst_h);
  for (int denom : {8, 4, 2}) {
    const tjscalingfactor f{1, denom};
    if (std::min(TJSCALED(width, f), TJSCALED(height, f)) >= need) return denom;
  }
  return 1;
}

uint64_t jpeg_memory_estimate(const uint8_t* data, size_t size, int dst_w, int dst_h) {
  tv::JpegSegments segments(data, size);
  tv::JpegSegment s;
  while (segments.next(&s)) {
    if (!tv::jpeg_is_frame_header(s.marker) || s.size < 6) continue;
    const uint64_t h = ((uint64_t)s.payload[1] << 8) | s.payload[2], w = ((uint64_t)s.payload[3] << 8) | s.payload[4];
    const uint64_t comps = s.payload[5];
    const bool progressive = s.marker == 0xC2 || s.marker == 0xC6 || s.marker == 0xCA || s.marker == 0xCE;
    const int denom = jpeg_scale_for((int)w, (int)h, dst_w, dst_h);
    const uint64_t sw = (w + (uint64_t)denom - 1) / (uint64_t)denom, sh = (h + (uint64_t)denom - 1) / (uint64_t)denom;
    const uint64_t decoded = sw * sh * std::max<uint64_t>(comps, 3);  // CMYK decodes to 4, then 3
    const uint64_t upright = sw * sh * 3;
    const uint64_t coefficients = progressive ? w * h * comps * 2 : 0;
    const uint64_t rows = w * 16 * std::max<uint64_t>(comps, 1) * 2;  // a band of MCU rows in flight
    return decoded + upright + coefficients + rows;
  }
  return 0;
}

uint64_t png_memory_estimate(const uint8_t* d, size_t size) {
  if (size < 8 + 8 + 13 || std::memcmp(d + 12, "IHDR", 4) != 0) return 0;
  auto be32 = [&](size_t at) {
    return ((uint64_t)d[at] << 24) | ((uint64_t)d[at + 1] << 16) | ((uint64_t)d[at + 2] << 8) | d[at + 3];
  };
  const uint64_t w = be32(16), h = be32(20);
  const int bit_depth = d[24], color_type = d[25];
  // Samples per pixel in the file, and after expansion (palette to RGB, tRNS to alpha: counted).
  const uint64_t file_channels = color_type == 0   ? 1
                                 : color_type == 2 ? 3
                                 : color_type == 3 ? 1
                                 : color_type == 4 ? 2
                                                   : 4;
  const uint64_t png_channels = color_type == 0 || color_type == 4 ? 2 : 4;
  const uint64_t out_channels = color_type == 0 || color_type == 4 ? 1 : 3;
  const uint64_t row_bytes = (w * file_channels * (uint64_t)std::max(bit_depth, 1) + 7) / 8 + 1;
  return w * h * png_channels + 2 * w * h * out_channels + h * sizeof(void*) + 2 * row_bytes;
}

// "40000000 bytes" as "38.1 MB".
std::string mb(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", (float)bytes / (1024.f * 1024.f));
  return text;
}

}  // namespace

uint64_t decode_memory_estimate(const uint8_t* data, size_t size, int dst_w, int dst_h) {
  if (data == nullptr) return 0;
  if (is_jpeg_data(data, size)) return jpeg_memory_estimate(data, size, dst_w, dst_h);
  if (is_png_data(data, size)) return png_memory_estimate(data, size);
  return 0;
}

InputImage decode_for_input(const uint8_t* data, size_t size, const std::string& name, int dst_w, int dst_h,
                            uint64_t max_bytes) {
  if (data == nullptr || size == 0) throw_not_an_image(data, 0, name);
  const uint64_t need = max_bytes ? decode_memory_estimate(data, size, dst_w, dst_h) : 0;
  if (need > max_bytes) {
    const bool png = is_png_data(data, size);
    throw Error(
        "'" + name + "' needs about " + mb(need) + " to decode (a " + (png ? "PNG" : "JPEG") +
        " image), more than the " + mb(max_bytes) + " each decoding thread can have here: " +
        (png ? "scale it down or save it as JPEG (a large JPEG is decoded at a reduced scale), " : "scale it down, ") +
        "or decode with fewer --threads.");
  }
  InputImage out;
  if (is_jpeg_data(data, size)) {
    const JpegHeader header = read_jpeg_header(data, size, name);
    out.scale_denom = jpeg_scale_for(header.width, header.height, dst_w, dst_h);
    out.orientation = exif_orientation(data, size);
    out.image = apply_orientation(decode_jpeg(data, size, name, 0, out.scale_denom), out.orientation);
    return out;
  }
  if (is_png_data(data, size)) {
    PngJob job;
    job.data = data;
    job.size = size;
    run_png_or_throw(job, name);
    out.orientation = orientation_of_png_exif(job);
    out.image = apply_orientation(png_to_image(job), out.orientation);
    return out;
  }
  throw_not_an_image(data, size, name);
}

}  // namespace tvh
