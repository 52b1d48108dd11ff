// Real photo files made at test time, the way phones and desktops keep them: PNG variants written by
// libpng, JPEGs with an EXIF orientation block, CMYK JPEGs, and pictures whose class depends on their
// orientation. Shared by the tests and the fuzzers' seed maker (fuzz/make_seed.cpp).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace tvtest {

// PNG layouts encode_png can write.
enum class PngKind { Gray, GrayAlpha, Rgb, Rgba, Palette, PaletteTrns };

// Encodes width x height pixels given as RGBA (4 bytes per pixel, whatever the kind) as a PNG of
// `kind` with 8 or 16 bits per sample (palette kinds: 8 only; the palette is built from the pixels,
// at most 256 colours). Gray kinds use the R channel. exif_orientation 1..8 adds an eXIf chunk
// (0 = none); interlaced writes Adam7.
std::vector<uint8_t> encode_png(const std::vector<uint8_t>& rgba, int width, int height, PngKind kind, int bit_depth,
                                int exif_orientation = 0, bool interlaced = false);

// A TIFF block (as in an EXIF APP1 segment after "Exif\0\0", or a PNG eXIf chunk) with one IFD holding
// only the Orientation tag; big_endian writes "MM" byte order, else "II".
std::vector<uint8_t> exif_tiff_block(int orientation, bool big_endian = false);

// The JPEG with an APP1 "Exif" segment carrying `orientation` inserted after its SOI marker.
std::vector<uint8_t> with_exif_orientation(const std::vector<uint8_t>& jpeg, int orientation, bool big_endian = false);

// An RGB picture of width x height as it should be displayed: dark, with a bright block filling the
// top-left quadrant of its centre square (top_left) or the bottom-right quadrant (else).
std::vector<uint8_t> quadrant_picture(int width, int height, bool top_left);

// The pixels to store so that a viewer applying EXIF `orientation` shows `displayed` (w x h x c);
// the stored image is h x w for orientations 5..8. Written independently of the reader's code.
std::vector<uint8_t> stored_for_orientation(const std::vector<uint8_t>& displayed, int w, int h, int c,
                                            int orientation);

// Which quadrant of a decoded model input (w x h x c) is bright: 0 top-left, 1 top-right,
// 2 bottom-left, 3 bottom-right, -1 when no quadrant stands out.
int bright_quadrant(const uint8_t* pixels, int w, int h, int c);

// A YCCK ("CMYK") JPEG of w x h from RGB pixels, with inverted (Adobe) CMYK values.
std::vector<uint8_t> encode_cmyk_jpeg(const std::vector<uint8_t>& rgb, int w, int h);

// Adds RGB -> RGBA with alpha 255.
std::vector<uint8_t> to_rgba(const std::vector<uint8_t>& rgb, int w, int h);

}  // namespace tvtest
