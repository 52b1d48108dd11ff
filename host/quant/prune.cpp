#include "host/quant/prune.h"

#include <algorithm>
#include <cmath>

#include "host/base/error.h"
#include "host/layers/layer_host.h"
#include "host/model/model_io.h"

namespace tvh {

namespace {

// True when conv layer i's output reaches a later Conv2D or Dense (which can drop the matching input
// channels or columns) through layers that keep channel c apart from the others (the table's
// keeps_channels) only.
bool prunable(const tv::ModelPlan& plan, int i) {
  for (int j = i + 1; j < plan.num_layers; ++j) {
    const tv::LayerType t = plan.desc.layers[j].type;
    if (t == tv::LayerType::Conv2D || t == tv::LayerType::Dense) return true;
    if (!tv::layer_info(t).keeps_channels) return false;
  }
  return false;
}

}  // namespace

std::vector<int> prune_quota(const std::vector<int>& channels, double ratio) {
  int total = 0;
  for (int c : channels) total += c;
  const int want = (int)std::ceil(ratio * total - 1e-9);
  std::vector<int> q(channels.size(), 0);
  std::vector<double> rem(channels.size(), 0);
  int sum = 0;
  for (size_t i = 0; i < channels.size(); ++i) {
    double exact = ratio * channels[i];
    q[i] = std::min((int)std::floor(exact + 1e-9), channels[i] - 1);
    rem[i] = exact - q[i];
    sum += q[i];
  }
  while (sum < want) {
    int best = -1;
    for (size_t i = 0; i < channels.size(); ++i)
      if (q[i] < channels[i] - 1 && (best < 0 || rem[i] > rem[(size_t)best] + 1e-12)) best = (int)i;
    if (best < 0) break;
    q[(size_t)best]++;
    rem[(size_t)best] -= 1.0;
    ++sum;
  }
  return q;
}

PruneResult prune_model(const tv::ModelPlan& plan, const float* params, double ratio) {
  if (!(ratio >= 0 && ratio < 1)) throw Error("--ratio must be in [0, 1), not " + std::to_string(ratio) + ".");
  const int L = plan.num_layers;
  PruneResult r;
  std::vector<int> conv_layers, counts;
  for (int i = 0; i < L; ++i)
    if (plan.desc.layers[i].type == tv::LayerType::Conv2D && prunable(plan, i)) {
      conv_layers.push_back(i);
      counts.push_back(plan.layers[i].out.c);
    }
  if (conv_layers.empty()) throw Error("the model has no conv layer whose channels can be pruned.");
  const std::vector<int> quota = prune_quota(counts, ratio);

  // Which output channels every prunable conv keeps.
  std::vector<std::vector<int>> keep((size_t)L);
  for (size_t k = 0; k < conv_layers.size(); ++k) {
    const int i = conv_layers[k];
    const tv::LayerPlan& lp = plan.layers[i];
    const int n = lp.out.c, fan = (int)(lp.weight_count / (size_t)n);
    const float* w = params + lp.param_offset;
    PrunedLayer pl;
    pl.index = i;
    pl.before = n;
    for (int o = 0; o < n; ++o) {
      double s = 0;
      for (int t = 0; t < fan; ++t) s += std::fabs((double)w[(size_t)o * fan + t]);
      pl.l1.push_back(s);
    }
    std::vector<int> order = channel_range(n);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      if (pl.l1[(size_t)a] != pl.l1[(size_t)b]) return pl.l1[(size_t)a] < pl.l1[(size_t)b];
      return a > b;
    });
    pl.removed.assign(order.begin(), order.begin() + quota[k]);
    std::sort(pl.removed.begin(), pl.removed.end());
    for (int o = 0; o < n; ++o)
      if (!std::binary_search(pl.removed.begin(), pl.removed.end(), o)) pl.kept.push_back(o);
    pl.after = (int)pl.kept.size();
    r.channels_before += pl.before;
    r.channels_after += pl.after;
    keep[(size_t)i] = pl.kept;
    r.layers.push_back(pl);
  }

  // The smaller description.
  r.desc = plan.desc;
  for (const PrunedLayer& pl : r.layers) r.desc.layers[pl.index].units = (uint16_t)pl.after;
  auto small = plan_or_throw(r.desc, "the pruned model");
  r.params.assign(small->param_count, 0.f);

  // Copy the kept parameters, following the kept channel set of the current tensor through the layers.
  std::vector<int> kept = channel_range(plan.input.c);  // kept channels of the current tensor (original indices)
  for (int i = 0; i < L; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    const tv::LayerPlan& lp = plan.layers[i];
    const tv::LayerPlan& np = small->layers[i];
    const float* w = params + lp.param_offset;
    const float* b = w + lp.weight_count;
    float* nw = r.params.data() + np.param_offset;
    float* nb = nw + np.weight_count;
    const PruneStep step{d, lp, np, w, b, nw, nb, keep[(size_t)i]};
    host_layer(d.type).prune(step, &kept);
  }
  return r;
}

}  // namespace tvh
