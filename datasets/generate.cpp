// tvgen-dataset: writes the project's own small dataset of photo-like JPEGs, deterministically.
//
//   tvgen-dataset OUT_DIR [--per-class N] [--seed S] [--size PIXELS] [--quality Q]
//
// Three classes (OUT_DIR/0blank, 1circle, 2cross), N images each named img_NNN.jpg. Every image is a
// lit, textured "table top" (base tint, lighting gradient, vignette, smooth grain, sensor noise); the
// circle and cross classes add a marker-drawn ring or cross with a soft shadow at a random position,
// size, stroke width, angle and ink colour. Image k of a class depends only on (seed, class, k), so the
// bytes are the same on every run and a larger --per-class keeps the smaller set as its prefix.
// Only integer PRNG steps, + - * / and sqrt (correctly rounded everywhere) feed the pixels.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/jpeg.h"
#include "tools/common/cli.h"
#include "tv/rng.h"

namespace {

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

struct Rgb {
  float r, g, b;
};

float clampf(float v, float lo, float hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Smooth value noise: random values on a grid of `cell` pixels, interpolated with smoothstep.
struct ValueNoise {
  int cells_x = 0, cells_y = 0;
  float cell = 1;
  std::vector<float> grid;
  ValueNoise(Rng& rng, int size, float cell_px) : cell(cell_px) {
    cells_x = cells_y = (int)((float)size / cell_px) + 2;
    grid.resize((size_t)cells_x * (size_t)cells_y);
    for (float& v : grid) v = rng.range(-1.0f, 1.0f);
  }
  float at(float x, float y) const {
    const float gx = x / cell, gy = y / cell;
    const int ix = (int)gx, iy = (int)gy;
    float fx = gx - (float)ix, fy = gy - (float)iy;
    fx = fx * fx * (3.0f - 2.0f * fx);
    fy = fy * fy * (3.0f - 2.0f * fy);
    const float* row0 = &grid[(size_t)iy * (size_t)cells_x];
    const float* row1 = row0 + cells_x;
    const float top = row0[ix] + (row0[ix + 1] - row0[ix]) * fx;
    const float bottom = row1[ix] + (row1[ix + 1] - row1[ix]) * fx;
    return top + (bottom - top) * fy;
  }
};

// Distance from p to the segment a-b.
float segment_distance(float px, float py, float ax, float ay, float bx, float by) {
  const float dx = bx - ax, dy = by - ay;
  float t = ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy);
  t = clampf(t, 0.0f, 1.0f);
  const float ex = px - (ax + t * dx), ey = py - (ay + t * dy);
  return std::sqrt(ex * ex + ey * ey);
}

enum class Shape { None, Ring, Cross };

// The drawn object: coverage in [0, 1] of a stroke of width `stroke` at pixel (x, y) with edge softness.
struct Object {
  Shape shape = Shape::None;
  float cx = 0, cy = 0, radius = 0, stroke = 0;
  float ux = 1, uy = 0;  // the cross's first arm direction (unit); the second is perpendicular
  float distance(float x, float y) const {
    if (shape == Shape::Ring) {
      const float dx = x - cx, dy = y - cy;
      const float d = std::sqrt(dx * dx + dy * dy) - radius;
      return d < 0 ? -d : d;
    }
    const float d1 = segment_distance(x, y, cx - ux * radius, cy - uy * radius, cx + ux * radius, cy + uy * radius);
    const float d2 = segment_distance(x, y, cx + uy * radius, cy - ux * radius, cx - uy * radius, cy + ux * radius);
    return d1 < d2 ? d1 : d2;
  }
  // Antialiased coverage with an edge `soft` pixels wide.
  float coverage(float x, float y, float dx, float dy, float soft) const {
    if (shape == Shape::None) return 0.0f;
    const float d = distance(x - dx, y - dy);
    return clampf((stroke * 0.5f - d) / soft + 0.5f, 0.0f, 1.0f);
  }
};

std::vector<uint8_t> render(Shape shape, uint64_t image_seed, int size) {
  Rng rng(image_seed);
  const float s = (float)size;
  const float half = s * 0.5f;

  // Table top: a light tint, lit from a random side, darker towards the corners.
  const float base_level = rng.range(150.0f, 215.0f);
  const Rgb tint{rng.range(0.92f, 1.06f), rng.range(0.92f, 1.04f), rng.range(0.85f, 1.02f)};
  float lx = rng.range(-1.0f, 1.0f), ly = rng.range(-1.0f, 1.0f);
  const float ln = std::sqrt(lx * lx + ly * ly) + 1e-3f;
  lx /= ln;
  ly /= ln;
  const float light = rng.range(0.10f, 0.30f);
  const float vignette = rng.range(0.05f, 0.20f);
  const ValueNoise coarse(rng, size, s / 5.0f);
  const ValueNoise fine(rng, size, s / 16.0f);
  const float coarse_amp = rng.range(6.0f, 14.0f), fine_amp = rng.range(2.0f, 6.0f);

  // The object: marker ink, mostly dark, sometimes a saturated colour.
  Object obj;
  obj.shape = shape;
  obj.cx = half + rng.range(-0.10f, 0.10f) * s;
  obj.cy = half + rng.range(-0.10f, 0.10f) * s;
  obj.radius = rng.range(0.18f, 0.30f) * s;
  obj.stroke = rng.range(0.06f, 0.09f) * s;
  {
    const float ax = rng.range(4.0f, 10.0f), ay = rng.range(-3.0f, 3.0f);
    const float an = std::sqrt(ax * ax + ay * ay);
    obj.ux = ax / an;
    obj.uy = ay / an;
  }
  Rgb ink{rng.range(10.0f, 70.0f), rng.range(10.0f, 70.0f), rng.range(10.0f, 70.0f)};
  const int accent = rng.integer(0, 5);  // 0..2: one channel brighter (red, green or blue marker)
  if (accent == 0) ink.r = rng.range(120.0f, 190.0f);
  if (accent == 1) ink.g = rng.range(90.0f, 150.0f);
  if (accent == 2) ink.b = rng.range(110.0f, 180.0f);
  const float shadow_dx = rng.range(2.0f, 6.0f), shadow_dy = rng.range(2.0f, 7.0f);
  const float shadow_strength = rng.range(0.10f, 0.25f);

  std::vector<uint8_t> pixels((size_t)size * (size_t)size * 3);
  Rng grain{image_seed ^ 0x5851F42D4C957F2Dull};
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      const float px = (float)x + 0.5f, py = (float)y + 0.5f;
      const float rx = (px - half) / half, ry = (py - half) / half;
      float level = base_level * (1.0f + light * (rx * lx + ry * ly)) * (1.0f - vignette * 0.5f * (rx * rx + ry * ry));
      level += coarse_amp * coarse.at(px, py) + fine_amp * fine.at(px, py);
      const float shadow = obj.coverage(px, py, shadow_dx, shadow_dy, 5.0f) * shadow_strength;
      level *= 1.0f - shadow;
      const float cover = obj.coverage(px, py, 0.0f, 0.0f, 1.5f);
      const float ink_shade = 1.0f + 0.12f * fine.at(py, px);  // uneven ink
      const float noise = (grain.unit() + grain.unit() - 1.0f) * 3.0f;
      const float bg[3] = {level * tint.r, level * tint.g, level * tint.b};
      const float fg[3] = {ink.r * ink_shade, ink.g * ink_shade, ink.b * ink_shade};
      uint8_t* out = &pixels[((size_t)y * (size_t)size + (size_t)x) * 3];
      for (int c = 0; c < 3; ++c) {
        const float v = bg[c] + (fg[c] - bg[c]) * cover + noise;
        out[c] = (uint8_t)(clampf(v, 0.0f, 255.0f) + 0.5f);
      }
    }
  }
  return pixels;
}

uint64_t mix_seed(uint64_t seed, uint64_t cls, uint64_t index) {
  Rng rng(seed * 0x2545F4914F6CDD1Dull ^ (cls << 32) ^ index);
  rng.next();
  return rng.next();
}

}  // namespace

int generate_main(int argc, char** argv) {
  std::string out_dir;
  int per_class = 36, size = 240, quality = 85;
  uint64_t seed = 1;
  CLI::App app{"tvgen-dataset: writes OUT_DIR/{0blank,1circle,2cross}/img_NNN.jpg, deterministic photo-like JPEGs.",
               "tvgen-dataset"};
  app.add_option("OUT_DIR", out_dir, "The folder to write into")->required();
  app.add_option("--per-class", per_class, "Images per class (default 36)")->check(tvcli::whole(1, 999));
  app.add_option("--seed", seed, "Generator seed (default 1)")->check(tvcli::whole(0, 2147483647));
  app.add_option("--size", size, "Square image side in pixels (default 240, the device camera)")
      ->check(tvcli::whole(16, 4096));
  app.add_option("--quality", quality, "JPEG quality (default 85)")->check(tvcli::whole(1, 100));
  if (const int rc = tvcli::parse(app, argc, argv, "tvgen-dataset"); rc >= 0) return rc;
  const char* const class_names[] = {"0blank", "1circle", "2cross"};
  const Shape shapes[] = {Shape::None, Shape::Ring, Shape::Cross};
  size_t total_bytes = 0;
  for (int c = 0; c < 3; ++c) {
    const std::string dir = out_dir + "/" + class_names[c];
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw tvh::Error("cannot create the folder '" + dir + "': " + ec.message() + ".");
    for (int k = 0; k < per_class; ++k) {
      const std::vector<uint8_t> pixels = render(shapes[c], mix_seed(seed, (uint64_t)c, (uint64_t)k), size);
      const std::vector<uint8_t> jpeg = tvh::encode_jpeg(pixels.data(), size, size, 3, quality, false);
      char name[32];
      std::snprintf(name, sizeof name, "/img_%03d.jpg", k);
      tvh::write_file_atomic(dir + name, jpeg);
      total_bytes += jpeg.size();
    }
  }
  std::printf("wrote %d images (%d per class, %dx%d, quality %d) totalling %zu bytes to %s\n", 3 * per_class, per_class,
              size, size, quality, total_bytes, out_dir.c_str());
  return 0;
}

int main(int argc, char** argv) {
  return tvcli::run_main("tvgen-dataset", generate_main, argc, argv);
}
