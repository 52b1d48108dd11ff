#include "tv/image/procedural.h"

#include <math.h>
#include <string.h>

#include "tv/rng.h"

namespace tv {

namespace {

// Uniform in [lo, hi) from 24 random bits.
float draw(Rng& r, float lo, float hi) {
  return lo + (hi - lo) * r.uniform();
}

// A seed for (seed, what, a, b): splitmix64 steps, so neighbouring indices give unrelated streams.
uint64_t mix(uint64_t seed, uint64_t what, uint64_t a, uint64_t b = 0) {
  Rng r(seed ^ (what * 0x9E3779B97F4A7C15ULL));
  r.state ^= r.next() + a * 0xD1B54A32D192ED03ULL;
  r.state ^= r.next() + b * 0x8CB92BA72F3D8DD7ULL;
  return r.next();
}

uint8_t to_byte(float v) {
  const float x = v < 0.f ? 0.f : (v > 255.f ? 255.f : v);
  return (uint8_t)(x + 0.5f);
}

// Writes colour rgb (0..255 floats) into pixel p of a c-channel picture (gray: the channels' mean).
void put(uint8_t* p, int c, const float* rgb) {
  if (c == 1) {
    p[0] = to_byte((rgb[0] + rgb[1] + rgb[2]) * (1.0f / 3.0f));
  } else {
    for (int k = 0; k < 3; ++k) p[k] = to_byte(rgb[k]);
  }
}

// ---------------------------------------------------------------- fractals

constexpr int kProbeSide = 32;     // the attractor is judged on a 32 x 32 picture
constexpr float kMinFill = 0.12f;  // of its cells touched, or the system is drawn again
constexpr int kWarmup = 16;        // chaos-game steps before points are drawn

// Largest singular value squared of the map's 2x2 part: (T + sqrt(T^2 - 4 det^2)) / 2.
float stretch2(const float* m) {
  const float t = m[0] * m[0] + m[1] * m[1] + m[2] * m[2] + m[3] * m[3];
  const float det = m[0] * m[3] - m[1] * m[2];
  const float disc = t * t - 4.0f * det * det;
  return 0.5f * (t + sqrtf(disc > 0.f ? disc : 0.f));
}

// The map the chaos game takes: chosen with probability proportional to |det| (+ a floor), as
// FractalDB weights them.
int pick_map(const IfsClass& s, const float* cum, Rng& r) {
  const float u = r.uniform() * cum[s.maps - 1];
  for (int i = 0; i < s.maps - 1; ++i)
    if (u < cum[i]) return i;
  return s.maps - 1;
}

void cumulative_weights(const IfsClass& s, float* cum) {
  float total = 0;
  for (int i = 0; i < s.maps; ++i) {
    const float det = s.m[i][0] * s.m[i][3] - s.m[i][1] * s.m[i][2];
    total += (det < 0 ? -det : det) + 0.02f;
    cum[i] = total;
  }
}

// The chaos game's bounding box over n points (after the warm-up).
void attractor_bounds(const IfsClass& s, const float* cum, uint64_t seed, int n, float* box) {
  Rng r(seed);
  float x = 0, y = 0;
  box[0] = box[1] = 1e30f;
  box[2] = box[3] = -1e30f;
  for (int i = 0; i < n + kWarmup; ++i) {
    const float* m = s.m[pick_map(s, cum, r)];
    const float nx = m[0] * x + m[1] * y + m[4], ny = m[2] * x + m[3] * y + m[5];
    x = nx;
    y = ny;
    if (i < kWarmup) continue;
    box[0] = x < box[0] ? x : box[0];
    box[1] = y < box[1] ? y : box[1];
    box[2] = x > box[2] ? x : box[2];
    box[3] = y > box[3] ? y : box[3];
  }
}

// The share of a 32 x 32 picture the attractor touches.
float fill_rate(const IfsClass& s, uint64_t seed) {
  float cum[kMaxIfsMaps], box[4];
  cumulative_weights(s, cum);
  attractor_bounds(s, cum, seed, 2000, box);
  const float bw = box[2] - box[0], bh = box[3] - box[1];
  if (!(bw > 1e-4f && bh > 1e-4f && bw < 1e4f && bh < 1e4f)) return 0;
  const float scale = (float)(kProbeSide - 1) / (bw > bh ? bw : bh);
  uint8_t hit[kProbeSide * kProbeSide / 8] = {0};
  Rng r(seed + 1);
  float x = 0, y = 0;
  int touched = 0;
  for (int i = 0; i < 4000 + kWarmup; ++i) {
    const float* m = s.m[pick_map(s, cum, r)];
    const float nx = m[0] * x + m[1] * y + m[4], ny = m[2] * x + m[3] * y + m[5];
    x = nx;
    y = ny;
    if (i < kWarmup) continue;
    const int px = (int)((x - box[0]) * scale), py = (int)((y - box[1]) * scale);
    if (px < 0 || py < 0 || px >= kProbeSide || py >= kProbeSide) continue;
    const int k = py * kProbeSide + px;
    if (!(hit[k >> 3] & (1 << (k & 7)))) {
      hit[k >> 3] = (uint8_t)(hit[k >> 3] | (1 << (k & 7)));
      ++touched;
    }
  }
  return (float)touched / (float)(kProbeSide * kProbeSide);
}

void fractal_class(uint64_t seed, int index, IfsClass* out) {
  Rng r(mix(seed, 1, (uint64_t)index));
  for (int attempt = 0;; ++attempt) {
    IfsClass s;
    s.maps = 2 + (int)r.below(kMaxIfsMaps - 1);
    for (int i = 0; i < s.maps; ++i) {
      // each map drawn until it contracts (largest stretch below 0.9): about one draw in four does
      for (int tries = 0;; ++tries) {
        for (int k = 0; k < 6; ++k) s.m[i][k] = draw(r, -1.f, 1.f);
        if (stretch2(s.m[i]) < 0.81f) break;
        if (tries == 1000)  // never in practice: shrink the last draw until it contracts
          while (stretch2(s.m[i]) >= 0.81f)
            for (int k = 0; k < 4; ++k) s.m[i][k] *= 0.5f;
      }
      for (int k = 0; k < 3; ++k) s.colour[i][k] = draw(r, 60.f, 255.f);
    }
    // after 10,000 systems (never reached in practice) the last one is taken as it is
    if (fill_rate(s, r.next()) >= kMinFill || attempt > 10000) {
      *out = s;
      return;
    }
  }
}

void fractal_image(const IfsClass& cls, uint64_t key, int instance, int h, int w, int c, uint8_t* out) {
  Rng r(mix(key, 2, (uint64_t)instance));
  IfsClass s = cls;
  // FractalDB's instances: one parameter of one map reweighted (0.8 to 1.2), then a flip
  const int map = (int)r.below((uint32_t)s.maps), param = (int)r.below(6);
  s.m[map][param] *= draw(r, 0.8f, 1.2f);
  if (stretch2(s.m[map]) >= 0.81f) s.m[map][param] = cls.m[map][param];  // it must still contract
  const bool flip_x = r.below(2) != 0, flip_y = r.below(2) != 0;
  float cum[kMaxIfsMaps], box[4];
  cumulative_weights(s, cum);
  const uint64_t game = r.next();
  attractor_bounds(s, cum, game, 1500, box);
  float bw = box[2] - box[0], bh = box[3] - box[1];
  if (!(bw > 1e-4f && bh > 1e-4f && bw < 1e4f && bh < 1e4f)) bw = bh = 1;  // degenerate: a dot
  // placement: 70 to 95 % of the shorter side, anywhere it fits
  const float side = (float)(h < w ? h : w) * draw(r, 0.7f, 0.95f);
  const float scale = side / (bw > bh ? bw : bh);
  const float ox = draw(r, 0.f, (float)w - bw * scale), oy = draw(r, 0.f, (float)h - bh * scale);
  float background[3], tint[kMaxIfsMaps][3];
  for (int k = 0; k < 3; ++k) background[k] = draw(r, 0.f, 70.f);
  for (int i = 0; i < s.maps; ++i)
    for (int k = 0; k < 3; ++k) tint[i][k] = s.colour[i][k] * draw(r, 0.75f, 1.0f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) put(out + ((size_t)y * (size_t)w + (size_t)x) * (size_t)c, c, background);
  // points brighten what they land on: dense parts of the attractor come out bright
  const int points = 3 * h * w;
  const float step = 0.12f;
  Rng g(game);
  float x = 0, y = 0;
  for (int i = 0; i < points + kWarmup; ++i) {
    const int k = pick_map(s, cum, g);
    const float* m = s.m[k];
    const float nx = m[0] * x + m[1] * y + m[4], ny = m[2] * x + m[3] * y + m[5];
    x = nx;
    y = ny;
    if (i < kWarmup) continue;
    int px = (int)(ox + (x - box[0]) * scale), py = (int)(oy + (y - box[1]) * scale);
    if (px < 0 || py < 0 || px >= w || py >= h) continue;
    if (flip_x) px = w - 1 - px;
    if (flip_y) py = h - 1 - py;
    uint8_t* p = out + ((size_t)py * (size_t)w + (size_t)px) * (size_t)c;
    if (c == 1) {
      const float v = (float)p[0] + step * (tint[k][0] + tint[k][1] + tint[k][2]) * (1.0f / 3.0f);
      p[0] = to_byte(v);
    } else {
      for (int ch = 0; ch < 3; ++ch) p[ch] = to_byte((float)p[ch] + step * tint[k][ch]);
    }
  }
}

// ---------------------------------------------------------------- dead leaves

void leaves_class(uint64_t seed, int index, LeavesClass* out) {
  Rng r(mix(seed, 3, (uint64_t)index));
  LeavesClass s;
  for (float& v : s.shape_weight) v = draw(r, 0.f, 1.f);
  s.shape_weight[r.below(3)] += 1.0f;  // one shape leads
  s.min_radius = draw(r, 0.02f, 0.08f);
  s.size_decay = draw(r, 0.45f, 0.9f);
  s.levels = 4 + (int)r.below(5);
  for (auto& col : s.palette)
    for (float& v : col) v = draw(r, 0.f, 255.f);
  s.stripes = r.below(2) ? draw(r, 0.05f, 0.25f) : 0.f;
  *out = s;
}

// Is (x, y) on a leaf of this shape centred at (cx, cy), radius rad, turned by the unit vector (ux, uy)?
bool on_leaf(int shape, float x, float y, float cx, float cy, float rad, float ux, float uy) {
  const float dx = x - cx, dy = y - cy;
  const float u = dx * ux + dy * uy, v = -dx * uy + dy * ux;  // in the leaf's own axes
  if (shape == 0) return u * u + v * v <= rad * rad;
  if (shape == 1) return u <= rad && u >= -rad && v <= rad && v >= -rad;
  // a triangle pointing along u: apex (rad, 0), base at u = -rad/2
  if (u < -0.5f * rad || u > rad) return false;
  const float half = (rad - u) * 0.57735f;  // tan 30 degrees: equilateral
  return v <= half && v >= -half;
}

void leaves_image(const LeavesClass& s, uint64_t key, int instance, int h, int w, int c, uint8_t* out) {
  Rng r(mix(key, 4, (uint64_t)instance));
  const float side = (float)(h < w ? h : w);
  float bg[3];
  const float* base = s.palette[r.below(kLeavesPalette)];
  for (int k = 0; k < 3; ++k) bg[k] = base[k] * 0.5f;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) put(out + ((size_t)y * (size_t)w + (size_t)x) * (size_t)c, c, bg);
  // size levels min_radius x 1.25^k, level k+1 size_decay times as likely as level k
  float level_cum[16], p = 1.f, total = 0.f, shape_total = 0.f;
  for (int k = 0; k < s.levels; ++k) {
    total += p;
    level_cum[k] = total;
    p *= s.size_decay;
  }
  for (float v : s.shape_weight) shape_total += v;
  const int leaves = 120 + (int)r.below(120);
  for (int n = 0; n < leaves; ++n) {
    const float u = r.uniform() * total;
    int level = 0;
    while (level < s.levels - 1 && u >= level_cum[level]) ++level;
    float rad = s.min_radius * side;
    for (int k = 0; k < level; ++k) rad *= 1.25f;
    rad *= draw(r, 0.85f, 1.15f);
    const float su = r.uniform() * shape_total;
    const int shape = su < s.shape_weight[0] ? 0 : (su < s.shape_weight[0] + s.shape_weight[1] ? 1 : 2);
    const float cx = draw(r, -rad, (float)w + rad), cy = draw(r, -rad, (float)h + rad);
    float ux = draw(r, -1.f, 1.f), uy = draw(r, -1.f, 1.f);
    const float len = sqrtf(ux * ux + uy * uy);
    if (len < 1e-3f) {
      ux = 1.f;
      uy = 0.f;
    } else {
      ux /= len;
      uy /= len;
    }
    float col[3], col2[3];
    const float* pc = s.palette[r.below(kLeavesPalette)];
    for (int k = 0; k < 3; ++k) {
      col[k] = pc[k] * draw(r, 0.8f, 1.2f);
      col2[k] = col[k] * 0.55f;
    }
    const float period = s.stripes * side;
    const int x0 = (int)(cx - rad - 1.f), x1 = (int)(cx + rad + 1.f);
    const int y0 = (int)(cy - rad - 1.f), y1 = (int)(cy + rad + 1.f);
    for (int y = y0 < 0 ? 0 : y0; y <= y1 && y < h; ++y)
      for (int x = x0 < 0 ? 0 : x0; x <= x1 && x < w; ++x) {
        const float fx = (float)x + 0.5f, fy = (float)y + 0.5f;
        if (!on_leaf(shape, fx, fy, cx, cy, rad, ux, uy)) continue;
        bool dark = false;
        if (period > 0.f) {  // stripes across the leaf's own axis
          const float along = (fx - cx) * ux + (fy - cy) * uy + 1000.f * period;
          const int band = (int)(along / (0.5f * period));
          dark = (band & 1) != 0;
        }
        put(out + ((size_t)y * (size_t)w + (size_t)x) * (size_t)c, c, dark ? col2 : col);
      }
  }
}

}  // namespace

void procedural_class(ProceduralFamily family, uint64_t seed, int index, ProceduralClass* out) {
  *out = ProceduralClass();
  out->family = family;
  out->key = mix(seed, 5, (uint64_t)index, (uint64_t)family);
  if (family == ProceduralFamily::Fractal)
    fractal_class(seed, index, &out->ifs);
  else
    leaves_class(seed, index, &out->leaves);
}

void procedural_image(const ProceduralClass& cls, uint64_t seed, int instance, int h, int w, int c, uint8_t* out) {
  if (cls.family == ProceduralFamily::Fractal)
    fractal_image(cls.ifs, mix(cls.key, 6, seed), instance, h, w, c, out);
  else
    leaves_image(cls.leaves, mix(cls.key, 6, seed), instance, h, w, c, out);
}

const char* procedural_family_name(ProceduralFamily f) {
  return f == ProceduralFamily::Fractal ? "fractal" : "leaves";
}

bool parse_procedural_family(const char* name, ProceduralFamily* out) {
  if (strcmp(name, "fractal") == 0) {
    *out = ProceduralFamily::Fractal;
    return true;
  }
  if (strcmp(name, "leaves") == 0) {
    *out = ProceduralFamily::DeadLeaves;
    return true;
  }
  return false;
}

}  // namespace tv
