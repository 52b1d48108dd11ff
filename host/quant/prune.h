// Structured pruning of conv channels: L1-norm importance per output channel, the least important
// fraction removed, and the smaller model rebuilt with every later layer following.
//
// A Conv2D layer is prunable when its output reaches a later Conv2D or Dense layer through layers that
// work channel by channel (activations, clip, pooling, depthwise conv, flatten). Removing its output
// channel c removes: its filter c and bias c; channel c of every depthwise layer on the way (filter
// taps and bias); channel c of every spatial position of a Flatten (HWC: index (y * W + x) * C + c);
// and input channel c of the consumer conv, or the dense columns (y * W + x) * C + c.
#pragma once
#include <string>
#include <vector>

#include "tv/model/model.h"

namespace tvh {

struct PrunedLayer {
  int index = 0;              // the conv layer
  int before = 0, after = 0;  // output channels
  std::vector<int> kept;      // original indices of the kept channels, ascending
  std::vector<int> removed;   // original indices of the removed channels, ascending
  std::vector<double> l1;     // L1 norm of every original output channel's filter
};

struct PruneResult {
  tv::ModelDesc desc;         // the smaller model (conv units reduced)
  std::vector<float> params;  // its parameters (plan_model(desc) layout)
  std::vector<PrunedLayer> layers;
  int channels_before = 0, channels_after = 0;  // over the prunable conv layers
};

// Number of channels to remove from each of the layers' channel counts so that at least
// ceil(ratio * total) are removed overall, spread proportionally (largest remainder, ties to the
// earlier layer), each layer keeping at least one channel.
std::vector<int> prune_quota(const std::vector<int>& channels, double ratio);

// Removes the lowest-L1 `ratio` of the prunable conv channels (ties: the higher channel index goes
// first) and rebuilds the model. Deterministic. Throws tvh::Error when ratio is outside [0, 1) or the
// model has no prunable conv layer.
PruneResult prune_model(const tv::ModelPlan& plan, const float* params, double ratio);

}  // namespace tvh
