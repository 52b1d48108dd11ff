#include "tv/detect/grid.h"

#include <math.h>

namespace tv {

namespace {

int clamp_index(float f, int size) {
  const float x = f * (float)size;
  if (!(x > 0.f)) return 0;  // also NaN
  const int i = x >= (float)size ? size - 1 : (int)x;
  return i < size ? i : size - 1;
}

}  // namespace

int grid_cell_class(const float* p, int n, float threshold) {
  if (n < 2) return -1;
  int best = 1;
  for (int k = 2; k < n; ++k)
    if (p[k] > p[best]) best = k;
  return p[best] >= threshold ? best - 1 : -1;
}

int grid_cell_of(float fx, float fy, int grid_h, int grid_w) {
  return clamp_index(fy, grid_h) * grid_w + clamp_index(fx, grid_w);
}

int grid_targets(const DetectBox* boxes, int n, int grid_h, int grid_w, uint8_t* target) {
  const int cells = grid_h * grid_w;
  for (int c = 0; c < cells; ++c) target[c] = 0;
  int lost = 0;
  for (int i = 0; i < n; ++i) {
    const DetectBox& b = boxes[i];
    if (b.label < 0 || b.label > 254) continue;
    const int c = grid_cell_of(b.cx, b.cy, grid_h, grid_w);
    bool take = target[c] == 0;
    if (!take) {
      ++lost;
      // the cell's box so far: the earlier box with this centre cell and the label it wrote
      for (int j = 0; j < i; ++j) {
        const DetectBox& o = boxes[j];
        if (o.label + 1 != target[c] || grid_cell_of(o.cx, o.cy, grid_h, grid_w) != c) continue;
        take = b.w * b.h < o.w * o.h;
        break;
      }
    }
    if (take) target[c] = (uint8_t)(b.label + 1);
  }
  return lost;
}

size_t grid_objects_scratch_ints(int grid_h, int grid_w) {
  return grid_h > 0 && grid_w > 0 ? 2 * (size_t)grid_h * (size_t)grid_w : 0;
}

int grid_objects(const float* probs, int grid_h, int grid_w, int n, float threshold, int input_h, int input_w,
                 int* scratch, GridObject* out, int max_out) {
  if (n < 2 || grid_h < 1 || grid_w < 1) return 0;
  if (!(threshold >= 1e-30f)) threshold = 1e-30f;  // every cell of an object then weighs more than 0
  const int cells = grid_h * grid_w;
  int* cls = scratch;            // each cell's class, -1 = none, -2 = already in an object
  int* stack = scratch + cells;  // cells waiting to be visited
  for (int c = 0; c < cells; ++c) cls[c] = grid_cell_class(probs + (size_t)c * (size_t)n, n, threshold);
  const float step_x = (float)input_w / (float)grid_w, step_y = (float)input_h / (float)grid_h;
  int found = 0;
  for (int first = 0; first < cells; ++first) {
    const int label = cls[first];
    if (label < 0) continue;
    GridObject o;
    o.label = label;
    float weight = 0.f, sx = 0.f, sy = 0.f;
    int top = 0;
    stack[top++] = first;
    cls[first] = -2;
    while (top > 0) {
      const int c = stack[--top];
      const int row = c / grid_w, col = c % grid_w;
      const float p = probs[(size_t)c * (size_t)n + (size_t)label + 1];
      o.prob = p > o.prob ? p : o.prob;
      o.cells++;
      weight += p;
      sx += p * ((float)col + 0.5f) * step_x;
      sy += p * ((float)row + 0.5f) * step_y;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int r = row + dy, k = col + dx;
          if (r < 0 || r >= grid_h || k < 0 || k >= grid_w) continue;
          const int nb = r * grid_w + k;
          if (cls[nb] != label) continue;
          cls[nb] = -2;  // marked when pushed: the stack never holds a cell twice (at most `cells` entries)
          stack[top++] = nb;
        }
      }
    }
    o.x = sx / weight;
    o.y = sy / weight;
    if (found < max_out) out[found] = o;
    ++found;
  }
  return found;
}

bool f1_better(const DetectCounts& a, const DetectCounts& b) {
  // 2a / (2a + fa) > 2b / (2b + fb), both denominators > 0; an empty count's F1 is 1 (= 2/2).
  const int64_t an = a.tp + a.fp + a.fn > 0 ? 2 * (int64_t)a.tp : 2, ad = a.tp + a.fp + a.fn > 0 ? an + a.fp + a.fn : 2;
  const int64_t bn = b.tp + b.fp + b.fn > 0 ? 2 * (int64_t)b.tp : 2, bd = b.tp + b.fp + b.fn > 0 ? bn + b.fp + b.fn : 2;
  return an * bd > bn * ad;
}

DetectCounts match_objects(const GridObject* objects, int n, const DetectBox* boxes, int nb, int input_h, int input_w,
                           int* box_of_object, uint8_t* box_found) {
  DetectCounts c;
  for (int j = 0; j < nb; ++j) box_found[j] = 0;
  for (int i = 0; i < n; ++i) box_of_object[i] = -2;  // -2: not matched yet
  const float inv_w = 1.0f / (float)input_w, inv_h = 1.0f / (float)input_h;
  for (int done = 0; done < n; ++done) {
    int next = -1;  // the most probable object not matched yet, the earlier on ties
    for (int i = 0; i < n; ++i)
      if (box_of_object[i] == -2 && (next < 0 || objects[i].prob > objects[next].prob)) next = i;
    const GridObject& o = objects[next];
    const float fx = o.x * inv_w, fy = o.y * inv_h;
    int best = -1;
    float best_d = 0.f;
    for (int j = 0; j < nb; ++j) {
      const DetectBox& b = boxes[j];
      const float dx = fx - b.cx, dy = fy - b.cy;
      if (box_found[j] || b.label != o.label || !(fabsf(dx) <= 0.5f * b.w && fabsf(dy) <= 0.5f * b.h)) continue;
      const float d = dx * dx + dy * dy;
      if (best < 0 || d < best_d) {
        best = j;
        best_d = d;
      }
    }
    box_of_object[next] = best;
    if (best >= 0) {
      box_found[best] = 1;
      c.tp++;
    } else {
      c.fp++;
    }
  }
  c.fn = nb - c.tp;
  return c;
}

namespace {

// Appends text to a line of capacity cap (the NUL included); past it, the line ends in "...".
struct LineWriter {
  char* out;
  int cap, len;
  bool full;
  void put(const char* t) {
    for (; *t && !full; ++t) {
      if (len + 1 >= cap) {
        full = true;
        for (int k = len - 3 < 0 ? 0 : len - 3; k < len; ++k) out[k] = '.';
        break;
      }
      out[len++] = *t;
    }
  }
  void put_int(long v) {
    char digits[24];
    int d = 0;
    const bool neg = v < 0;
    unsigned long u = neg ? 0ul - (unsigned long)v : (unsigned long)v;
    do {
      digits[d++] = (char)('0' + u % 10);
      u /= 10;
    } while (u);
    char t[26];
    int k = 0;
    if (neg) t[k++] = '-';
    while (d) t[k++] = digits[--d];
    t[k] = 0;
    put(t);
  }
};

long round_to_long(float v) {
  if (!(v == v)) return 0;
  if (v > 2e9f) return 2000000000l;
  if (v < -2e9f) return -2000000000l;
  return (long)(v < 0 ? v - 0.5f : v + 0.5f);
}

}  // namespace

int objects_line(const GridObject* objects, int n, const char* const* names, int num_names, float scale_x,
                 float scale_y, char* out, int cap) {
  if (!out || cap < 1) return 0;
  LineWriter w{out, cap, 0, false};
  const auto name_of = [&](int label) { return label >= 0 && label < num_names && names[label] ? names[label] : "?"; };
  if (n <= 0) w.put("no objects");
  // The counts, class by class (labels outside the names counted last, as "?").
  bool first = true;
  for (int k = 0; k <= num_names && n > 0; ++k) {
    int count = 0;
    for (int i = 0; i < n; ++i) {
      const bool outside = objects[i].label < 0 || objects[i].label >= num_names;
      if (k == num_names ? outside : objects[i].label == k) ++count;
    }
    if (!count) continue;
    if (!first) w.put(", ");
    first = false;
    w.put_int(count);
    w.put(" ");
    w.put(k == num_names ? "?" : name_of(k));
  }
  for (int i = 0; i < n; ++i) {
    w.put(i ? ", " : ": ");
    w.put(name_of(objects[i].label));
    w.put(" (");
    w.put_int(round_to_long(objects[i].x * scale_x));
    w.put(",");
    w.put_int(round_to_long(objects[i].y * scale_y));
    w.put(") ");
    const long hundredths = round_to_long(objects[i].prob * 100.f);
    w.put_int(hundredths / 100);
    w.put(".");
    if (hundredths % 100 < 10) w.put("0");
    w.put_int(hundredths % 100);
  }
  out[w.len] = 0;
  return w.len;
}

}  // namespace tv
