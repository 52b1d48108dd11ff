#include "tv/train/backbone.h"

#include <string.h>

#include "tv/train/imprint.h"

namespace tv {

const char* start_mode_name(StartMode mode) {
  switch (mode) {
    case StartMode::Scratch: return "scratch";
    case StartMode::Backbone: return "backbone";
    case StartMode::Auto: return "auto";
  }
  return "?";
}

bool parse_start_mode(const char* text, StartMode* mode) {
  if (!text || !mode) return false;
  for (int m = 0; m <= (int)StartMode::Auto; ++m)
    if (strcmp(text, start_mode_name((StartMode)m)) == 0) {
      *mode = (StartMode)m;
      return true;
    }
  return false;
}

bool backbone_fits(const ModelPlan& backbone, const ModelPlan& target) {
  const int head = imprint_layer(backbone);
  if (head < 0 || head != imprint_layer(target)) return false;
  ModelDesc with_target_classes = backbone.desc;  // the backbone's network as the target's classes make it
  with_target_classes.num_classes = target.desc.num_classes;
  if (with_target_classes.layers[head].units != 0) with_target_classes.layers[head].units = target.desc.num_classes;
  return same_model(with_target_classes, target.desc);
}

Status backbone_params(const ModelPlan& backbone, const float* from, const ModelPlan& target, float* params) {
  if (!from || !params || !backbone_fits(backbone, target)) return status_plain(StatusCode::InvalidArgument);
  const int head = imprint_layer(target);
  for (int i = 0; i < target.num_layers; ++i) {
    const LayerPlan& t = target.layers[i];
    const size_t n = t.weight_count + t.bias_count;
    if (n == 0) continue;
    if (i == head)
      memset(params + t.param_offset, 0, n * sizeof(float));
    else
      memcpy(params + t.param_offset, from + backbone.layers[i].param_offset, n * sizeof(float));
  }
  return ok_status();
}

Status imprint_head(const ModelPlan& plan, float* params, const float* features, const int* labels, int n,
                    float* scratch) {
  for (int c = 0; c < plan.desc.num_classes; ++c) {
    const Status st = imprint_class(plan, params, c, features, labels, n, scratch);
    if (st.code == StatusCode::NonFiniteActivation) {
      Status s = st;
      s.layer = (int16_t)c;
      return s;
    }
    if (!st.ok() && st.code != StatusCode::InvalidArgument) return st;
    if (!st.ok()) {  // nothing to imprint: a zero row (imprint_class may have begun it)
      const LayerPlan& lp = plan.layers[imprint_layer(plan)];
      const size_t F = lp.in.size();
      memset(params + lp.param_offset + (size_t)c * F, 0, F * sizeof(float));
      params[lp.param_offset + lp.weight_count + (size_t)c] = 0.f;
    }
  }
  return ok_status();
}

bool backbone_helps(int fewest_photos_per_class) {
  return fewest_photos_per_class <= kBackboneMaxPhotosPerClass;
}

}  // namespace tv
