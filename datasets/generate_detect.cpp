// tvgen-detect: writes the project's own object detection dataset, deterministically, in the layout of
// Ultralytics YOLO.
//
//   tvgen-detect OUT_DIR [--train N] [--val N] [--seed S] [--size PIXELS] [--quality Q] [--style a|b]
//
// OUT_DIR/data.yaml, OUT_DIR/images/{train,val}/img_NNNN.jpg and OUT_DIR/labels/{train,val}/img_NNNN.txt,
// one "class cx cy w h" line per object (normalised to the image, 6 decimals; an empty file for an image
// without objects). An image holds 0 to 4 marker-drawn rings, crosses and triangles (about 15 % none),
// each 10 to 22 % of the image side, their centres inside the image and apart by at least 0.7 of the
// larger one's size; an object cut by the border has its box clipped to the image. Style a draws outlines
// in marker ink with a soft shadow on lit table tops (plain, wood, tiles, speckled; the drawing of
// datasets/shapes, datasets/drawing.h); style b, for measuring generalisation, draws the same classes filled
// in bright colours on cloth and checkered backgrounds. Image k of a split depends only on (seed, style,
// split, k): every run writes the same bytes and a larger --train keeps the smaller set as its prefix.
// OUT_DIR must not exist; it appears only when everything was written.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "datasets/drawing.h"
#include "datasets/new_folder.h"
#include "host/base/error.h"
#include "tools/common/cli.h"

namespace {

namespace fs = std::filesystem;
using tvgen::Mark;
using tvgen::MarkKind;
using tvgen::Rgb;
using tvgen::Rng;

constexpr int kKinds = 3;
const char* const kKindNames[kKinds] = {"ring", "cross", "triangle"};
const MarkKind kKindMarks[kKinds] = {MarkKind::Ring, MarkKind::Cross, MarkKind::Triangle};

enum class Backdrop { Table, Wood, Tiles, Speckle, Cloth, Checker };

struct Object {
  int kind = 0;
  Mark mark;
  Rgb ink{0, 0, 0};
  tvgen::Shadow shadow;
  tvgen::PixelBox ink_box, shadow_box;  // where the coverage of the mark and of its shadow can be non-zero
};

// Everything an image is drawn from.
struct Scene {
  int size = 0;
  tvgen::TableTop table;
  Backdrop backdrop = Backdrop::Table;
  Rgb cast{1, 1, 1};  // colour cast and exposure of the whole picture
  // The backdrop's pattern: a direction, a period in pixels, offsets, an amplitude and a noise; what `amp`,
  // `warp`, `line` and `threshold` stand for depends on the backdrop (draw_backdrop_a and _b say).
  float dir_x = 1, dir_y = 0, period = 1, amp = 0, warp = 0, offset_x = 0, offset_y = 0, line = 0, threshold = 0;
  uint64_t tile_seed = 0;
  tvgen::ValueNoise pattern;
  Rgb second{1, 1, 1};  // the checker's second colour, the wood's tint
  std::vector<Object> objects;
};

// |2 frac(t) - 1|: a triangle wave in [0, 1] with period 1.
float triangle_wave(float t) {
  const float f = t - std::floor(t);
  const float v = 2.0f * f - 1.0f;
  return v < 0 ? -v : v;
}

Rgb scaled(Rgb c, float r, float g, float b) {
  return {c.r * r, c.g * g, c.b * b};
}

void draw_backdrop_a(Rng& rng, Scene* sc) {
  const float s = (float)sc->size;
  sc->backdrop = (Backdrop)rng.integer(0, 3);
  sc->cast = {rng.range(0.86f, 1.10f), rng.range(0.86f, 1.08f), rng.range(0.82f, 1.10f)};
  const float exposure = rng.range(0.78f, 1.12f);
  sc->cast = scaled(sc->cast, exposure, exposure, exposure);
  if (sc->backdrop == Backdrop::Wood) {
    tvgen::draw_direction(rng, 0.2f, 1.0f, -1.0f, 1.0f, &sc->dir_x, &sc->dir_y);
    sc->period = rng.range(0.035f, 0.08f) * s;
    sc->amp = rng.range(0.10f, 0.22f);
    sc->warp = rng.range(0.6f, 1.8f);
    sc->pattern = tvgen::ValueNoise(rng, sc->size, s / 3.0f);
    sc->second = {rng.range(1.04f, 1.12f), rng.range(0.86f, 0.94f), rng.range(0.62f, 0.78f)};
  } else if (sc->backdrop == Backdrop::Tiles) {
    sc->period = s / rng.range(2.5f, 5.5f);
    sc->offset_x = rng.range(0.0f, sc->period);
    sc->offset_y = rng.range(0.0f, sc->period);
    sc->line = rng.range(1.0f, 2.5f);
    sc->amp = rng.range(0.70f, 0.86f);   // the grout's brightness
    sc->warp = rng.range(0.04f, 0.12f);  // how much one tile differs from the next
    sc->tile_seed = rng.next();
  } else if (sc->backdrop == Backdrop::Speckle) {
    sc->pattern = tvgen::ValueNoise(rng, sc->size, rng.range(1.2f, 2.2f));
    sc->threshold = rng.range(0.50f, 0.72f);
    sc->amp = rng.range(0.18f, 0.40f) * (rng.integer(0, 1) == 0 ? 1.0f : -0.8f);  // dark or light specks
  }
}

void draw_backdrop_b(Rng& rng, Scene* sc) {
  const float s = (float)sc->size;
  sc->backdrop = rng.integer(0, 1) == 0 ? Backdrop::Cloth : Backdrop::Checker;
  const float dark = rng.range(0.30f, 0.60f);
  sc->cast = {rng.range(0.60f, 1.30f) * dark, rng.range(0.60f, 1.30f) * dark, rng.range(0.60f, 1.30f) * dark};
  if (sc->backdrop == Backdrop::Cloth) {
    sc->period = rng.range(2.5f, 5.0f);
    sc->amp = rng.range(0.08f, 0.20f);
    sc->warp = rng.range(0.10f, 0.25f);  // colour blotches
    sc->pattern = tvgen::ValueNoise(rng, sc->size, s / 3.0f);
  } else {
    sc->period = s / rng.range(3.0f, 7.0f);
    sc->offset_x = rng.range(0.0f, sc->period);
    sc->offset_y = rng.range(0.0f, sc->period);
    sc->second = {rng.range(0.50f, 1.50f), rng.range(0.50f, 1.50f), rng.range(0.50f, 1.50f)};
  }
}

// The backdrop's colour at a pixel before the shadows: the table top's level, patterned and tinted.
Rgb backdrop_colour(const Scene& sc, float px, float py) {
  const tvgen::TableTop& t = sc.table;
  float level = t.level(px, py);
  Rgb tint = scaled(t.tint, sc.cast.r, sc.cast.g, sc.cast.b);
  switch (sc.backdrop) {
    case Backdrop::Table: break;
    case Backdrop::Wood: {
      const float along = (px * sc.dir_x + py * sc.dir_y) / sc.period + sc.warp * sc.pattern.at(py, px);
      const float w = triangle_wave(along);
      level *= 1.0f - sc.amp * w * w;
      tint = scaled(tint, sc.second.r, sc.second.g, sc.second.b);
      break;
    }
    case Backdrop::Tiles: {
      const float gx = (px + sc.offset_x) / sc.period, gy = (py + sc.offset_y) / sc.period;
      const float fx = std::floor(gx), fy = std::floor(gy);
      Rng tile(sc.tile_seed ^ ((uint64_t)(int64_t)fx * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(int64_t)fy << 20));
      level *= 1.0f + sc.warp * (tile.unit() - 0.5f);
      const float ex = (gx - fx) * sc.period, ey = (gy - fy) * sc.period;  // pixels from the tile's corner
      const float edge_x = ex < sc.period - ex ? ex : sc.period - ex;
      const float edge_y = ey < sc.period - ey ? ey : sc.period - ey;
      const float edge = edge_x < edge_y ? edge_x : edge_y;
      const float grout = tvgen::clampf(sc.line - edge, 0.0f, 1.0f);
      level *= 1.0f - (1.0f - sc.amp) * grout;
      break;
    }
    case Backdrop::Speckle: {
      const float n = sc.pattern.at(px, py);
      level *= 1.0f - sc.amp * tvgen::clampf((n - sc.threshold) * 5.0f, 0.0f, 1.0f);
      break;
    }
    case Backdrop::Cloth: {
      const float wx = triangle_wave(px / sc.period), wy = triangle_wave(py / sc.period);
      level *= 1.0f + sc.amp * (wx - wy);
      const float blotch = sc.warp * sc.pattern.at(px, py);
      tint = scaled(tint, 1.0f + blotch, 1.0f - blotch, 1.0f + 0.5f * blotch);
      break;
    }
    case Backdrop::Checker: {
      const int cx = (int)std::floor((px + sc.offset_x) / sc.period),
                cy = (int)std::floor((py + sc.offset_y) / sc.period);
      if (((cx + cy) & 1) != 0) tint = scaled(tint, sc.second.r, sc.second.g, sc.second.b);
      break;
    }
  }
  return {level * tint.r, level * tint.g, level * tint.b};
}

// Bright colours for style b's filled shapes.
const Rgb kBrightPalette[6] = {{235, 205, 45}, {240, 135, 35},  {60, 195, 225},
                               {225, 70, 190}, {235, 235, 225}, {140, 225, 70}};
Rgb draw_bright_ink(Rng& rng) {
  const Rgb c = kBrightPalette[rng.integer(0, 5)];
  return {c.r + rng.range(-15.0f, 15.0f), c.g + rng.range(-15.0f, 15.0f), c.b + rng.range(-15.0f, 15.0f)};
}

float colour_distance(Rgb a, Rgb b) {
  return std::fabs(a.r - b.r) + std::fabs(a.g - b.g) + std::fabs(a.b - b.b);
}

// An ink that stands out from the backdrop colour `bg` under the object: a marker ink too close to it
// becomes a dark one, a bright colour too close to it the palette's colour farthest from it. No draws, so
// the generator's sequence does not depend on it.
Rgb visible_ink(Rgb ink, Rgb bg, bool style_b) {
  const float enough = 160.0f;
  if (colour_distance(ink, bg) >= enough) return ink;
  if (!style_b) return {ink.r * 0.3f, ink.g * 0.3f, ink.b * 0.3f};
  Rgb best = kBrightPalette[0];
  for (const Rgb& c : kBrightPalette)
    if (colour_distance(c, bg) > colour_distance(best, bg)) best = c;
  return best;
}

tvgen::PixelBox grown(tvgen::PixelBox b, float dx, float dy, float margin) {
  return {b.x0 + dx - margin, b.y0 + dy - margin, b.x1 + dx + margin, b.y1 + dy + margin};
}

bool inside(const tvgen::PixelBox& b, float x, float y) {
  return x >= b.x0 && x <= b.x1 && y >= b.y0 && y <= b.y1;
}

// Places 0 to 4 objects (about 15 % of the images none), their centres apart by 0.7 of the larger size.
void draw_objects(Rng& rng, bool style_b, Scene* sc) {
  const float s = (float)sc->size;
  const int wanted = rng.integer(0, 99) < 15 ? 0 : rng.integer(1, 4);
  std::vector<float> extents;
  for (int i = 0; i < wanted; ++i) {
    for (int attempt = 0; attempt < 40; ++attempt) {
      Object o;
      o.kind = rng.integer(0, kKinds - 1);
      const float extent = rng.range(0.10f, 0.22f) * s;
      o.mark.cx = rng.range(0.03f, 0.97f) * s;
      o.mark.cy = rng.range(0.03f, 0.97f) * s;
      bool apart = true;
      for (size_t j = 0; j < sc->objects.size(); ++j) {
        const float dx = o.mark.cx - sc->objects[j].mark.cx, dy = o.mark.cy - sc->objects[j].mark.cy;
        const float larger = 0.7f * (extent > extents[j] ? extent : extents[j]);
        if (dx * dx + dy * dy < larger * larger) apart = false;
      }
      if (!apart) continue;
      Mark& m = o.mark;
      m.kind = kKindMarks[o.kind];
      m.filled = style_b;
      tvgen::draw_direction(rng, 0.2f, 1.0f, -1.0f, 1.0f, &m.ux, &m.uy);
      const float stroke_frac =
          style_b && m.kind == MarkKind::Cross ? rng.range(0.26f, 0.34f) : rng.range(0.12f, 0.18f);
      m.stroke = stroke_frac * extent;
      if (m.stroke < 1.6f) m.stroke = 1.6f;
      const float body = m.filled && m.kind != MarkKind::Cross ? extent : extent - m.stroke;
      m.radius = m.kind == MarkKind::Triangle ? body * 0.6f : body * 0.5f;
      o.ink = visible_ink(style_b ? draw_bright_ink(rng) : tvgen::draw_marker_ink(rng),
                          backdrop_colour(*sc, m.cx, m.cy), style_b);
      o.shadow = tvgen::draw_shadow(rng);
      if (style_b) o.shadow.strength *= 1.8f;
      o.ink_box = grown(m.box(), 0.0f, 0.0f, 1.5f);
      o.shadow_box = grown(m.box(), o.shadow.dx, o.shadow.dy, 5.0f);
      sc->objects.push_back(o);
      extents.push_back(extent);
      break;
    }
  }
}

std::vector<uint8_t> render(const Scene& sc, uint64_t seed) {
  const int size = sc.size;
  std::vector<uint8_t> pixels((size_t)size * (size_t)size * 3);
  Rng grain{seed ^ 0x5851F42D4C957F2Dull};
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      const float px = (float)x + 0.5f, py = (float)y + 0.5f;
      Rgb c = backdrop_colour(sc, px, py);
      float light = 1.0f;
      for (const Object& o : sc.objects)
        if (inside(o.shadow_box, px, py))
          light *= 1.0f - o.mark.coverage(px, py, o.shadow.dx, o.shadow.dy, 5.0f) * o.shadow.strength;
      c = scaled(c, light, light, light);
      const float ink_shade = 1.0f + 0.12f * sc.table.fine.at(py, px);  // uneven ink
      for (const Object& o : sc.objects) {
        if (!inside(o.ink_box, px, py)) continue;
        const float cover = o.mark.coverage(px, py, 0.0f, 0.0f, 1.5f);
        c.r += (o.ink.r * ink_shade - c.r) * cover;
        c.g += (o.ink.g * ink_shade - c.g) * cover;
        c.b += (o.ink.b * ink_shade - c.b) * cover;
      }
      const float noise = tvgen::grain_noise(grain);
      uint8_t* out = &pixels[((size_t)y * (size_t)size + (size_t)x) * 3];
      out[0] = tvgen::to_byte(c.r + noise);
      out[1] = tvgen::to_byte(c.g + noise);
      out[2] = tvgen::to_byte(c.b + noise);
    }
  }
  return pixels;
}

// The YOLO label lines of a scene: each object's box clipped to the image, normalised.
std::string label_text(const Scene& sc) {
  const float s = (float)sc.size;
  std::string text;
  for (const Object& o : sc.objects) {
    const tvgen::PixelBox b = o.mark.box();
    const double x0 = b.x0 < 0 ? 0.0 : b.x0, y0 = b.y0 < 0 ? 0.0 : b.y0;
    const double x1 = b.x1 > s ? (double)s : b.x1, y1 = b.y1 > s ? (double)s : b.y1;
    if (!(x1 - x0 > 0.5 && y1 - y0 > 0.5))  // centres lie inside the image, so this never happens
      throw tvh::Error("internal error: an object's box inside the image is empty.");
    char line[96];
    std::snprintf(line, sizeof line, "%d %.6f %.6f %.6f %.6f\n", o.kind, (x0 + x1) * 0.5 / s, (y0 + y1) * 0.5 / s,
                  (x1 - x0) / s, (y1 - y0) / s);
    text += line;
  }
  return text;
}

struct Counts {
  int images = 0, empty = 0;
  int per_kind[kKinds] = {0, 0, 0};
  size_t bytes = 0;
};

void write_split(const fs::path& root, const char* split, int count, uint64_t seed, uint64_t group, bool style_b,
                 int size, int quality, Counts* counts) {
  const fs::path images = root / "images" / split, labels = root / "labels" / split;
  fs::create_directories(images);
  fs::create_directories(labels);
  for (int k = 0; k < count; ++k) {
    const uint64_t image_seed = tvgen::image_seed(seed, group, (uint64_t)k);
    Rng rng(image_seed);
    Scene sc;
    sc.size = size;
    sc.table = tvgen::draw_table_top(rng, size);
    if (style_b)
      draw_backdrop_b(rng, &sc);
    else
      draw_backdrop_a(rng, &sc);
    draw_objects(rng, style_b, &sc);
    char name[32];
    std::snprintf(name, sizeof name, "img_%04d", k);
    counts->bytes +=
        tvgen::write_rgb_jpeg(images / (std::string(name) + ".jpg"), render(sc, image_seed), size, quality);
    const std::string text = label_text(sc);
    tvgen::write_whole_file(labels / (std::string(name) + ".txt"), text.data(), text.size());
    ++counts->images;
    counts->empty += sc.objects.empty();
    for (const Object& o : sc.objects) ++counts->per_kind[o.kind];
  }
}

int detect_main(int argc, char** argv) {
  std::string out_dir, style = "a";
  int train = 1000, val = 100, size = 160, quality = 75;
  uint64_t seed = 1;
  CLI::App app{
      "tvgen-detect: writes a deterministic object detection dataset (rings, crosses, triangles) in the "
      "YOLO layout: OUT_DIR/data.yaml, images/{train,val}/img_NNNN.jpg, labels/{train,val}/img_NNNN.txt.",
      "tvgen-detect"};
  app.add_option("OUT_DIR", out_dir, "The folder to create (must not exist)")->required();
  app.add_option("--train", train, "Training images (default 1000)")->check(tvcli::whole(0, 9999));
  app.add_option("--val", val, "Validation images (default 100)")->check(tvcli::whole(0, 9999));
  app.add_option("--seed", seed, "Generator seed (default 1)")->check(tvcli::whole(0, 2147483647));
  app.add_option("--size", size, "Square image side in pixels (default 160)")->check(tvcli::whole(32, 4096));
  app.add_option("--quality", quality, "JPEG quality (default 75: datasets/detect's photos stay within 3.7 MB)")
      ->check(tvcli::whole(1, 100));
  app.add_option("--style", style,
                 "a: marker outlines on table tops (the committed datasets/detect); b: filled bright shapes on "
                 "cloth and checks, to measure generalisation")
      ->check(tvcli::one_of({"a", "b"}));
  if (const int rc = tvcli::parse(app, argc, argv, "tvgen-detect"); rc >= 0) return rc;
  const bool style_b = style == "b";
  const uint64_t first_group = style_b ? 2 : 0;
  Counts counts;
  tvgen::write_new_folder(out_dir, [&](const fs::path& tmp) {
    std::string yaml = "# tvgen-detect --style " + style + " --seed " + std::to_string(seed) + " --size " +
                       std::to_string(size) + " (datasets/README.md)\npath: .\ntrain: images/train\nval: images/val\n";
    yaml += "nc: " + std::to_string(kKinds) + "\nnames: [";
    for (int k = 0; k < kKinds; ++k) yaml += std::string(k ? ", " : "") + kKindNames[k];
    yaml += "]\n";
    tvgen::write_whole_file(tmp / "data.yaml", yaml.data(), yaml.size());
    write_split(tmp, "train", train, seed, first_group, style_b, size, quality, &counts);
    write_split(tmp, "val", val, seed, first_group + 1, style_b, size, quality, &counts);
  });
  std::printf(
      "wrote %d images (%d train, %d val, %dx%d, quality %d, style %s, %zu bytes of JPEG) to %s: %d rings, "
      "%d crosses, %d triangles, %d images without objects\n",
      counts.images, train, val, size, size, quality, style.c_str(), counts.bytes, out_dir.c_str(), counts.per_kind[0],
      counts.per_kind[1], counts.per_kind[2], counts.empty);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tvcli::run_main("tvgen-detect", detect_main, argc, argv);
}
