#include "host/prune.h"

#include <algorithm>
#include <cmath>

#include "host/error.h"
#include "host/model_io.h"

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

std::vector<int> iota_n(int n) {
  std::vector<int> v((size_t)n);
  for (int i = 0; i < n; ++i) v[(size_t)i] = i;
  return v;
}

// Element indices of an h x w x c tensor (HWC) that belong to channels `kept`, in HWC order.
std::vector<int> hwc_indices(int h, int w, int c, const std::vector<int>& kept) {
  std::vector<int> out;
  out.reserve((size_t)h * w * kept.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k : kept) out.push_back((y * w + x) * c + k);
  return out;
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
    std::vector<int> order = iota_n(n);
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
  std::vector<int> kept = iota_n(plan.input.c);  // kept channels of the current tensor (original indices)
  for (int i = 0; i < L; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    const tv::LayerPlan& lp = plan.layers[i];
    const tv::LayerPlan& np = small->layers[i];
    const float* w = params + lp.param_offset;
    const float* b = w + lp.weight_count;
    float* nw = r.params.data() + np.param_offset;
    float* nb = nw + np.weight_count;
    switch (d.type) {
      case tv::LayerType::Conv2D: {
        const std::vector<int> outs = keep[(size_t)i].empty() ? iota_n(lp.out.c) : keep[(size_t)i];
        const int kk = d.kernel_h * d.kernel_w, cin = lp.in.c, ncin = (int)kept.size();
        for (size_t o = 0; o < outs.size(); ++o) {
          for (int t = 0; t < kk; ++t)
            for (int c = 0; c < ncin; ++c)
              nw[(o * kk + t) * ncin + c] = w[((size_t)outs[o] * kk + t) * cin + kept[(size_t)c]];
          nb[o] = b[outs[o]];
        }
        kept = outs;
        break;
      }
      case tv::LayerType::DepthwiseConv2D: {
        const int kk = d.kernel_h * d.kernel_w, c = lp.in.c, nc = (int)kept.size();
        for (int t = 0; t < kk; ++t)
          for (int k = 0; k < nc; ++k) nw[(size_t)t * nc + k] = w[(size_t)t * c + kept[(size_t)k]];
        for (int k = 0; k < nc; ++k) nb[k] = b[kept[(size_t)k]];
        break;
      }
      case tv::LayerType::Dense: {
        const std::vector<int> cols = hwc_indices(lp.in.h, lp.in.w, lp.in.c, kept);
        const size_t in_n = lp.in.size(), units = (size_t)lp.out.c;
        if (cols.size() != np.in.size()) throw Error("internal error: pruned dense columns do not match the plan.");
        for (size_t o = 0; o < units; ++o) {
          for (size_t j = 0; j < cols.size(); ++j) nw[o * cols.size() + j] = w[o * in_n + (size_t)cols[j]];
          nb[o] = b[o];
        }
        kept = iota_n(lp.out.c);
        break;
      }
      case tv::LayerType::Flatten: kept = hwc_indices(lp.in.h, lp.in.w, lp.in.c, kept); break;
      case tv::LayerType::MaxPool2D:
      case tv::LayerType::AvgPool2D:
      case tv::LayerType::AdaptiveAvgPool2D:
      case tv::LayerType::GlobalAvgPool:
      case tv::LayerType::ReLU:
      case tv::LayerType::LeakyReLU:
      case tv::LayerType::Clip: break;  // keep the channel set
    }
  }
  return r;
}

}  // namespace tvh
