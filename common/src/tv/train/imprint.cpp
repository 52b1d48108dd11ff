#include "tv/train/imprint.h"

#include <math.h>
#include <string.h>

namespace tv {

namespace {

float dot(const float* a, const float* b, size_t n) {
  float s = 0.f;
  for (size_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

bool finite(float v) {
  return v - v == 0.f;
}

// Sorts pairs (value, flag) by value, ascending; heapsort: no allocation, O(n log n).
void sift_down(float* p, int root, int n) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && p[2 * (child + 1)] > p[2 * child]) ++child;
    if (!(p[2 * child] > p[2 * root])) return;
    for (int k = 0; k < 2; ++k) {
      const float t = p[2 * root + k];
      p[2 * root + k] = p[2 * child + k];
      p[2 * child + k] = t;
    }
    root = child;
  }
}

void sort_pairs(float* p, int n) {
  for (int i = n / 2 - 1; i >= 0; --i) sift_down(p, i, n);
  for (int end = n - 1; end > 0; --end) {
    for (int k = 0; k < 2; ++k) {
      const float t = p[k];
      p[k] = p[2 * end + k];
      p[2 * end + k] = t;
    }
    sift_down(p, 0, end);
  }
}

// pairs: m (gap, +1 for the new class / -1 for another) sorted by gap. The threshold t (the new class
// wins when gap > t) with the fewest photos on the wrong side, ties broken by the widest margin.
float best_threshold(const float* pairs, int m) {
  const float lo = pairs[0], hi = pairs[2 * (m - 1)];
  const float spacing = m > 1 && hi > lo ? (hi - lo) / (float)(m - 1) : 1.f;  // the margin beyond either end
  int positives = 0;
  for (int j = 0; j < m; ++j) positives += pairs[2 * j + 1] > 0.f;
  // Cut j: photos 0..j-1 below the threshold, j..m-1 above it.
  int pos_below = 0, neg_above = m - positives;
  int best_errors = m + 1;
  float best_width = -1.f, best_t = lo - spacing / 2;
  for (int j = 0; j <= m; ++j) {
    if (j > 0) {
      if (pairs[2 * (j - 1) + 1] > 0.f)
        ++pos_below;
      else
        --neg_above;
    }
    const int errors = pos_below + neg_above;
    float width, t;
    if (j == 0) {
      width = spacing, t = lo - spacing / 2;
    } else if (j == m) {
      width = spacing, t = hi + spacing / 2;
    } else {
      width = pairs[2 * j] - pairs[2 * (j - 1)];
      t = pairs[2 * (j - 1)] + width / 2;
    }
    if (errors < best_errors || (errors == best_errors && width > best_width)) {
      best_errors = errors;
      best_width = width;
      best_t = t;
    }
  }
  return best_t;
}

}  // namespace

int imprint_layer(const ModelPlan& plan) {
  int last = plan.num_layers - 1;
  while (last >= 0 && layer_in_place(plan.desc.layers[last].type)) --last;  // e.g. webmcu's Clip of the logits
  if (last < 0 || plan.desc.layers[last].type != LayerType::Dense) return -1;
  if (plan.layers[last].out.size() != (size_t)plan.desc.num_classes) return -1;
  return last;
}

Status plan_with_classes(const ModelPlan& old, int num_classes, ModelPlan* grown) {
  if (!grown) return status_plain(StatusCode::InvalidArgument);
  const int d = imprint_layer(old);
  if (d < 0) return status_plain(StatusCode::NotSupported, old.num_layers - 1);
  if (num_classes < old.desc.num_classes || num_classes > 0xffff)
    return status_value(StatusCode::InvalidArgument, -1, num_classes);
  ModelDesc desc = old.desc;
  desc.num_classes = (uint16_t)num_classes;
  if (desc.layers[d].units != 0) desc.layers[d].units = (uint16_t)num_classes;
  return plan_model(desc, grown);
}

void grow_class_params(const ModelPlan& old, const float* old_params, const ModelPlan& grown, float* params) {
  const int d = imprint_layer(old);
  const LayerPlan& o = old.layers[d];
  const LayerPlan& g = grown.layers[d];
  memcpy(params, old_params, o.param_offset * sizeof(float));  // every layer before it
  memset(params + g.param_offset, 0, (g.weight_count + g.bias_count) * sizeof(float));
  memcpy(params + g.param_offset, old_params + o.param_offset, o.weight_count * sizeof(float));  // rows 0..old-1
  memcpy(params + g.param_offset + g.weight_count, old_params + o.param_offset + o.weight_count,
         o.bias_count * sizeof(float));
}

Status imprint_class(const ModelPlan& plan, float* params, int cls, const float* features, const int* labels, int n,
                     float* scratch) {
  const int d = imprint_layer(plan);
  if (d < 0) return status_plain(StatusCode::NotSupported, plan.num_layers - 1);
  if (!params || !features || !labels || !scratch || n < 0 || cls < 0 || cls >= plan.desc.num_classes)
    return status_plain(StatusCode::InvalidArgument);
  const LayerPlan& lp = plan.layers[d];
  const size_t F = lp.in.size();
  float* W = params + lp.param_offset;
  float* bias = W + lp.weight_count;
  float* row = W + (size_t)cls * F;

  // The direction: the mean of the class's normalised features, less the mean of the other classes'
  // (photos of the rows already there). ReLU features of every photo share much of one direction; the
  // difference keeps what tells this class from the others (without other photos: the mean alone).
  memset(row, 0, F * sizeof(float));
  int count = 0, others = 0;
  for (int i = 0; i < n; ++i) {
    count += labels[i] == cls;
    others += labels[i] >= 0 && labels[i] < cls;
  }
  if (count == 0) return status_value(StatusCode::InvalidArgument, d, cls);
  int seen = 0;  // the class's photos with a feature that is not all zero
  for (int i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] > cls) continue;
    const float* f = features + (size_t)i * F;
    const float norm = sqrtf(dot(f, f, F));
    if (!finite(norm)) return status_value(StatusCode::NonFiniteActivation, d, i);
    if (!(norm > 0.f)) continue;
    seen += labels[i] == cls;
    const float w = labels[i] == cls ? 1.f / ((float)count * norm) : -1.f / ((float)others * norm);
    for (size_t k = 0; k < F; ++k) row[k] += f[k] * w;
  }
  const float mean_norm = sqrtf(dot(row, row, F));
  if (seen == 0 || !(mean_norm > 0.f)) return status_value(StatusCode::InvalidArgument, d, cls);
  // Scaled to the existing rows' mean norm (1 when there are none).
  float target = 1.f;
  if (cls > 0) {
    float sum = 0.f;
    for (int c = 0; c < cls; ++c) sum += sqrtf(dot(W + (size_t)c * F, W + (size_t)c * F, F));
    if (sum > 0.f) target = sum / (float)cls;
  }
  const float s = target / mean_norm;
  for (size_t k = 0; k < F; ++k) row[k] *= s;
  bias[cls] = 0.f;
  if (cls == 0) return ok_status();

  // The calibrated bias: the best threshold on gap(x) over this class's and the existing classes' photos.
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] > cls) continue;
    const float* f = features + (size_t)i * F;
    float best_other = 0.f;
    for (int c = 0; c < cls; ++c) {
      const float logit = dot(W + (size_t)c * F, f, F) + bias[c];
      if (c == 0 || logit > best_other) best_other = logit;
    }
    const float gap = dot(row, f, F) - best_other;
    if (!finite(gap)) return status_value(StatusCode::NonFiniteActivation, d, i);
    scratch[2 * m] = gap;
    scratch[2 * m + 1] = labels[i] == cls ? 1.f : -1.f;
    ++m;
  }
  sort_pairs(scratch, m);
  bias[cls] = -best_threshold(scratch, m);
  return ok_status();
}

void copy_class_row(const ModelPlan& plan, int cls, const float* from, float* to) {
  const int d = imprint_layer(plan);
  if (d < 0 || cls < 0 || cls >= plan.desc.num_classes) return;
  const LayerPlan& lp = plan.layers[d];
  const size_t F = lp.in.size();
  const size_t row = lp.param_offset + (size_t)cls * F, bias = lp.param_offset + lp.weight_count + (size_t)cls;
  memcpy(to + row, from + row, F * sizeof(float));
  to[bias] = from[bias];
}

Status imprint_classes(const ModelPlan& plan, float* params, int first_new, const float* features, const int* labels,
                       int n, float* scratch) {
  for (int c = first_new < 0 ? 0 : first_new; c < plan.desc.num_classes; ++c) {
    Status st = imprint_class(plan, params, c, features, labels, n, scratch);
    if (!st.ok()) {
      st.layer = (int16_t)c;
      return st;
    }
  }
  return ok_status();
}

}  // namespace tv
