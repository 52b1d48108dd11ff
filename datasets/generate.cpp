// tvgen-dataset: writes the project's own small dataset of photo-like JPEGs, deterministically.
//
//   tvgen-dataset OUT_DIR [--per-class N] [--seed S] [--size PIXELS] [--quality Q]
//
// Three classes (OUT_DIR/0blank, 1circle, 2cross), N images each named img_NNN.jpg. Every image is a
// lit, textured "table top" (base tint, lighting gradient, vignette, smooth grain, sensor noise); the
// circle and cross classes add a marker-drawn ring or cross with a soft shadow at a random position,
// size, stroke width, angle and ink colour. Image k of a class depends only on (seed, class, k), so the
// bytes are the same on every run and a larger --per-class keeps the smaller set as its prefix.
// Only integer PRNG steps, + - * / and sqrt (correctly rounded everywhere) feed the pixels; the drawing
// is datasets/drawing.h's, shared with tvgen-detect.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "datasets/drawing.h"
#include "host/base/error.h"
#include "tools/common/cli.h"

namespace {

using tvgen::Mark;
using tvgen::MarkKind;
using tvgen::Rgb;
using tvgen::Rng;

enum class Shape { None, Ring, Cross };

std::vector<uint8_t> render(Shape shape, uint64_t image_seed, int size) {
  Rng rng(image_seed);
  const float s = (float)size;
  const float half = s * 0.5f;
  const tvgen::TableTop table = tvgen::draw_table_top(rng, size);

  // The object: marker ink, mostly dark, sometimes a saturated colour.
  Mark obj;
  obj.kind = shape == Shape::Cross ? MarkKind::Cross : MarkKind::Ring;
  obj.cx = half + rng.range(-0.10f, 0.10f) * s;
  obj.cy = half + rng.range(-0.10f, 0.10f) * s;
  obj.radius = rng.range(0.18f, 0.30f) * s;
  obj.stroke = rng.range(0.06f, 0.09f) * s;
  tvgen::draw_direction(rng, 4.0f, 10.0f, -3.0f, 3.0f, &obj.ux, &obj.uy);
  const Rgb ink = tvgen::draw_marker_ink(rng);
  const tvgen::Shadow shadow = tvgen::draw_shadow(rng);

  std::vector<uint8_t> pixels((size_t)size * (size_t)size * 3);
  Rng grain{image_seed ^ 0x5851F42D4C957F2Dull};
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      const float px = (float)x + 0.5f, py = (float)y + 0.5f;
      float level = table.level(px, py);
      const bool drawn = shape != Shape::None;
      const float shade = drawn ? obj.coverage(px, py, shadow.dx, shadow.dy, 5.0f) * shadow.strength : 0.0f;
      level *= 1.0f - shade;
      const float cover = drawn ? obj.coverage(px, py, 0.0f, 0.0f, 1.5f) : 0.0f;
      const float ink_shade = 1.0f + 0.12f * table.fine.at(py, px);  // uneven ink
      const float noise = tvgen::grain_noise(grain);
      const float bg[3] = {level * table.tint.r, level * table.tint.g, level * table.tint.b};
      const float fg[3] = {ink.r * ink_shade, ink.g * ink_shade, ink.b * ink_shade};
      uint8_t* out = &pixels[((size_t)y * (size_t)size + (size_t)x) * 3];
      for (int c = 0; c < 3; ++c) out[c] = tvgen::to_byte(bg[c] + (fg[c] - bg[c]) * cover + noise);
    }
  }
  return pixels;
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
      const std::vector<uint8_t> pixels = render(shapes[c], tvgen::image_seed(seed, (uint64_t)c, (uint64_t)k), size);
      char name[32];
      std::snprintf(name, sizeof name, "/img_%03d.jpg", k);
      total_bytes += tvgen::write_rgb_jpeg(dir + name, pixels, size, quality);
    }
  }
  std::printf("wrote %d images (%d per class, %dx%d, quality %d) totalling %zu bytes to %s\n", 3 * per_class, per_class,
              size, size, quality, total_bytes, out_dir.c_str());
  return 0;
}

int main(int argc, char** argv) {
  return tvcli::run_main("tvgen-dataset", generate_main, argc, argv);
}
