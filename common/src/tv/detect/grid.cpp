#include "tv/detect/grid.h"

namespace tv {

namespace {

int clamp_index(float f, int size) {
  const float x = f * (float)size;
  if (!(x > 0.f)) return 0;  // also NaN
  const int i = x >= (float)size ? size - 1 : (int)x;
  return i < size ? i : size - 1;
}

// The object class of cell c (0..n-2), or -1 when no object channel reaches the threshold.
int cell_class(const float* probs, int c, int n, float threshold) {
  const float* p = probs + (size_t)c * (size_t)n;
  int best = 1;
  for (int k = 2; k < n; ++k)
    if (p[k] > p[best]) best = k;
  return p[best] >= threshold ? best - 1 : -1;
}

}  // namespace

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
  for (int c = 0; c < cells; ++c) cls[c] = cell_class(probs, c, n, threshold);
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

}  // namespace tv
