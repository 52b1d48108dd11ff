// The drawing the project's generated datasets share: tvgen-dataset (datasets/shapes, generate.cpp) and
// tvgen-detect (datasets/detect, generate_detect.cpp). Only integer PRNG steps, + - * / and sqrt (correctly
// rounded everywhere; the build has -ffp-contract=off) feed the pixels, so every machine writes the same
// bytes. The order in which each function draws from the generator is part of the committed datasets:
// changing it changes their bytes (Dataset.GeneratorReproducesCommittedShapes and
// DetectDataset.GeneratorReproducesCommittedDetect catch it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tv/rng.h"

namespace tvgen {

// The core's splitmix64 (identical on every platform) with the draws the pictures need.
struct Rng : tv::Rng {
  explicit Rng(uint64_t seed) : tv::Rng(seed) {}
  // Uniform float in [0, 1) with 24 random bits.
  float unit() { return (float)(next() >> 40) * (1.0f / 16777216.0f); }
  // Uniform float in [lo, hi).
  float range(float lo, float hi) { return lo + (hi - lo) * unit(); }
  // Uniform integer in [lo, hi] (small ranges; the modulo bias is irrelevant here).
  int integer(int lo, int hi) { return lo + (int)(next() % (uint64_t)(hi - lo + 1)); }
};

// The seed of one image from the generator's seed, a group (class, split) and the image's index.
uint64_t image_seed(uint64_t seed, uint64_t group, uint64_t index);

struct Rgb {
  float r, g, b;
};

float clampf(float v, float lo, float hi);

// Smooth value noise: random values in [-1, 1) on a grid of `cell` pixels, interpolated with smoothstep.
struct ValueNoise {
  int cells_x = 0, cells_y = 0;
  float cell = 1;
  std::vector<float> grid;
  ValueNoise() = default;
  ValueNoise(Rng& rng, int size, float cell_px);
  // (x, y) in [0, size] (the grid has a spare cell on each side).
  float at(float x, float y) const;
};

// Distance from p to the segment a-b.
float segment_distance(float px, float py, float ax, float ay, float bx, float by);

// The lit table top of datasets/shapes: a light tint, lit from a random side, darker towards the
// corners, with coarse and fine smooth grain.
struct TableTop {
  float half = 1;  // half the image side
  float base_level = 0;
  Rgb tint{1, 1, 1};
  float lx = 1, ly = 0;  // the lighting direction (unit)
  float light = 0, vignette = 0;
  ValueNoise coarse, fine;
  float coarse_amp = 0, fine_amp = 0;
  // The brightness at pixel centre (px, py), before the tint.
  float level(float px, float py) const;
};
TableTop draw_table_top(Rng& rng, int size);

// Marker ink: mostly dark, sometimes one channel brighter (a red, green or blue marker).
Rgb draw_marker_ink(Rng& rng);

// The soft shadow a drawn object casts: its offset in pixels and how much light it takes.
struct Shadow {
  float dx = 0, dy = 0, strength = 0;
};
Shadow draw_shadow(Rng& rng);

enum class MarkKind { Ring, Cross, Square, Triangle };

// An axis-aligned box in pixels.
struct PixelBox {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// A marker-drawn shape centred on (cx, cy). Its skeleton is a circle of `radius` (Ring), two perpendicular
// strokes of half-length `radius` (Cross), or a square / equilateral triangle whose corners lie `radius`
// from the centre; (ux, uy) is the direction of the first arm or corner. An outline is a stroke of width
// `stroke` along the skeleton (round ends); a filled mark covers the disc or polygon (a filled Cross is its
// stroke, so give it a wide one).
struct Mark {
  MarkKind kind = MarkKind::Ring;
  float cx = 0, cy = 0, radius = 0, stroke = 0;
  float ux = 1, uy = 0;
  bool filled = false;
  // The distance from (x, y) to the skeleton (an outline), or the signed distance to the shape, negative
  // inside (filled).
  float distance(float x, float y) const;
  // Antialiased coverage in [0, 1] at (x, y) of the mark moved by (dx, dy), with an edge `soft` pixels wide.
  float coverage(float x, float y, float dx, float dy, float soft) const;
  // The tight box of the ink (stroke included), unclipped.
  PixelBox box() const;
};

// A unit direction from a random vector (ax in [lo_x, hi_x), ay in [lo_y, hi_y)).
void draw_direction(Rng& rng, float lo_x, float hi_x, float lo_y, float hi_y, float* ux, float* uy);

// The sensor noise of one pixel: a triangular distribution of +-3 levels.
inline float grain_noise(Rng& grain) {
  return (grain.unit() + grain.unit() - 1.0f) * 3.0f;
}

// Rounds and clamps a level to a byte.
inline uint8_t to_byte(float v) {
  return (uint8_t)(clampf(v, 0.0f, 255.0f) + 0.5f);
}

// Encodes a size x size RGB image as a baseline JPEG of `quality` and writes it; returns its size in bytes.
size_t write_rgb_jpeg(const std::filesystem::path& path, const std::vector<uint8_t>& rgb, int size, int quality);

}  // namespace tvgen
