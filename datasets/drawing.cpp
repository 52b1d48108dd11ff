#include "datasets/drawing.h"

#include <cmath>

#include "datasets/new_folder.h"
#include "host/photos/jpeg.h"

namespace tvgen {

namespace fs = std::filesystem;

uint64_t image_seed(uint64_t seed, uint64_t group, uint64_t index) {
  Rng rng(seed * 0x2545F4914F6CDD1Dull ^ (group << 32) ^ index);
  rng.next();
  return rng.next();
}

float clampf(float v, float lo, float hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

ValueNoise::ValueNoise(Rng& rng, int size, float cell_px) : cell(cell_px) {
  cells_x = cells_y = (int)((float)size / cell_px) + 2;
  grid.resize((size_t)cells_x * (size_t)cells_y);
  for (float& v : grid) v = rng.range(-1.0f, 1.0f);
}

float ValueNoise::at(float x, float y) const {
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

float segment_distance(float px, float py, float ax, float ay, float bx, float by) {
  const float dx = bx - ax, dy = by - ay;
  float t = ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy);
  t = clampf(t, 0.0f, 1.0f);
  const float ex = px - (ax + t * dx), ey = py - (ay + t * dy);
  return std::sqrt(ex * ex + ey * ey);
}

TableTop draw_table_top(Rng& rng, int size) {
  TableTop t;
  const float s = (float)size;
  t.half = s * 0.5f;
  t.base_level = rng.range(150.0f, 215.0f);
  t.tint.r = rng.range(0.92f, 1.06f);
  t.tint.g = rng.range(0.92f, 1.04f);
  t.tint.b = rng.range(0.85f, 1.02f);
  float lx = rng.range(-1.0f, 1.0f);
  float ly = rng.range(-1.0f, 1.0f);
  const float ln = std::sqrt(lx * lx + ly * ly) + 1e-3f;
  t.lx = lx / ln;
  t.ly = ly / ln;
  t.light = rng.range(0.10f, 0.30f);
  t.vignette = rng.range(0.05f, 0.20f);
  t.coarse = ValueNoise(rng, size, s / 5.0f);
  t.fine = ValueNoise(rng, size, s / 16.0f);
  t.coarse_amp = rng.range(6.0f, 14.0f);
  t.fine_amp = rng.range(2.0f, 6.0f);
  return t;
}

float TableTop::level(float px, float py) const {
  const float rx = (px - half) / half, ry = (py - half) / half;
  float v = base_level * (1.0f + light * (rx * lx + ry * ly)) * (1.0f - vignette * 0.5f * (rx * rx + ry * ry));
  v += coarse_amp * coarse.at(px, py) + fine_amp * fine.at(px, py);
  return v;
}

Rgb draw_marker_ink(Rng& rng) {
  Rgb ink{rng.range(10.0f, 70.0f), rng.range(10.0f, 70.0f), rng.range(10.0f, 70.0f)};  // drawn left to right
  const int accent = rng.integer(0, 5);  // 0..2: one channel brighter (red, green or blue marker)
  if (accent == 0) ink.r = rng.range(120.0f, 190.0f);
  if (accent == 1) ink.g = rng.range(90.0f, 150.0f);
  if (accent == 2) ink.b = rng.range(110.0f, 180.0f);
  return ink;
}

Shadow draw_shadow(Rng& rng) {
  return Shadow{rng.range(2.0f, 6.0f), rng.range(2.0f, 7.0f), rng.range(0.10f, 0.25f)};  // drawn left to right
}

void draw_direction(Rng& rng, float lo_x, float hi_x, float lo_y, float hi_y, float* ux, float* uy) {
  const float ax = rng.range(lo_x, hi_x);
  const float ay = rng.range(lo_y, hi_y);
  const float an = std::sqrt(ax * ax + ay * ay);
  *ux = ax / an;
  *uy = ay / an;
}

namespace {

// The corners of a square (4) or triangle (3) mark; returns how many.
int mark_corners(const Mark& m, float* xs, float* ys) {
  if (m.kind == MarkKind::Square) {
    const float vx = -m.uy, vy = m.ux;  // perpendicular to (ux, uy)
    const float sx[4] = {m.ux, vx, -m.ux, -vx}, sy[4] = {m.uy, vy, -m.uy, -vy};
    for (int i = 0; i < 4; ++i) {
      xs[i] = m.cx + m.radius * sx[i];
      ys[i] = m.cy + m.radius * sy[i];
    }
    return 4;
  }
  // Rotations by 0, 120 and 240 degrees: cos = -1/2, sin = +-sqrt(3)/2.
  const float c = -0.5f, s = std::sqrt(3.0f) * 0.5f;
  const float dx[3] = {m.ux, m.ux * c - m.uy * s, m.ux * c + m.uy * s};
  const float dy[3] = {m.uy, m.ux * s + m.uy * c, -m.ux * s + m.uy * c};
  for (int i = 0; i < 3; ++i) {
    xs[i] = m.cx + m.radius * dx[i];
    ys[i] = m.cy + m.radius * dy[i];
  }
  return 3;
}

// Distance from (x, y) to a closed polygon's edges; negative inside when `signed_inside` (convex polygon).
float polygon_distance(const float* xs, const float* ys, int n, float x, float y, bool signed_inside) {
  float d = 1e30f;
  bool inside = true;
  for (int i = 0; i < n; ++i) {
    const int j = (i + 1) % n;
    const float e = segment_distance(x, y, xs[i], ys[i], xs[j], ys[j]);
    d = e < d ? e : d;
    const float cross = (xs[j] - xs[i]) * (y - ys[i]) - (ys[j] - ys[i]) * (x - xs[i]);
    if (cross < 0) inside = false;
  }
  return signed_inside && inside ? -d : d;
}

}  // namespace

float Mark::distance(float x, float y) const {
  if (kind == MarkKind::Ring) {
    const float dx = x - cx, dy = y - cy;
    const float d = std::sqrt(dx * dx + dy * dy) - radius;
    if (filled) return d;
    return d < 0 ? -d : d;
  }
  if (kind == MarkKind::Cross) {
    const float d1 = segment_distance(x, y, cx - ux * radius, cy - uy * radius, cx + ux * radius, cy + uy * radius);
    const float d2 = segment_distance(x, y, cx + uy * radius, cy - ux * radius, cx - uy * radius, cy + ux * radius);
    return d1 < d2 ? d1 : d2;
  }
  float xs[4], ys[4];
  const int n = mark_corners(*this, xs, ys);
  return polygon_distance(xs, ys, n, x, y, filled);
}

float Mark::coverage(float x, float y, float dx, float dy, float soft) const {
  const float d = distance(x - dx, y - dy);
  const float edge = filled && kind != MarkKind::Cross ? -d : stroke * 0.5f - d;
  return clampf(edge / soft + 0.5f, 0.0f, 1.0f);
}

PixelBox Mark::box() const {
  const bool outline = !filled || kind == MarkKind::Cross;
  const float pad = outline ? stroke * 0.5f : 0.0f;
  PixelBox b;
  if (kind == MarkKind::Ring) {
    b = {cx - radius, cy - radius, cx + radius, cy + radius};
  } else {
    float xs[4], ys[4];
    int n = 4;
    if (kind == MarkKind::Cross) {
      const float ex[4] = {ux, -ux, uy, -uy}, ey[4] = {uy, -uy, -ux, ux};
      for (int i = 0; i < 4; ++i) {
        xs[i] = cx + radius * ex[i];
        ys[i] = cy + radius * ey[i];
      }
    } else {
      n = mark_corners(*this, xs, ys);
    }
    b = {xs[0], ys[0], xs[0], ys[0]};
    for (int i = 1; i < n; ++i) {
      b.x0 = xs[i] < b.x0 ? xs[i] : b.x0;
      b.y0 = ys[i] < b.y0 ? ys[i] : b.y0;
      b.x1 = xs[i] > b.x1 ? xs[i] : b.x1;
      b.y1 = ys[i] > b.y1 ? ys[i] : b.y1;
    }
  }
  return {b.x0 - pad, b.y0 - pad, b.x1 + pad, b.y1 + pad};
}

size_t write_rgb_jpeg(const fs::path& path, const std::vector<uint8_t>& rgb, int size, int quality) {
  const std::vector<uint8_t> jpeg = tvh::encode_jpeg(rgb.data(), size, size, 3, quality, false);
  write_whole_file(path, jpeg.data(), jpeg.size());
  return jpeg.size();
}

}  // namespace tvgen
