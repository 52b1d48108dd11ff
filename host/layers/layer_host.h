// The host side of a layer type, one row per type (host/layers/layer_host.cpp): its config fields, its
// pruning rule and its .espdl emission (or refusal). The core side is its unit (tv/model/layer_table.h,
// tv/model/layer_unit.h). Every hook must be set (tv::Hook: a row with one left out does not compile),
// and the rows follow LayerType's numbering (a static_assert checks the count and the order).
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tvh {

// A layer's JSON object in a config file, as the row's config hook reads it (host/train/config.cpp; every
// refusal names the file and the key).
class LayerConfig {
 public:
  virtual ~LayerConfig() = default;
  // Refuses any key but these.
  virtual void only(std::initializer_list<const char*> keys) const = 0;
  virtual int integer(const char* key, int lo, int hi, int def) const = 0;
  virtual double number(const char* key, double lo, double hi, double def) const = 0;
  // "valid" or "same" (`def` when absent).
  virtual tv::Padding padding(const char* def) const = 0;
};

// One layer of host/quant/prune.cpp's copy of the kept parameters.
struct PruneStep {
  const tv::LayerDesc& d;
  const tv::LayerPlan& lp;  // the layer in the original model
  const tv::LayerPlan& np;  // and in the pruned one
  const float* w;           // its original weights and bias
  const float* b;
  float* nw;  // its pruned weights and bias (to fill)
  float* nb;
  const std::vector<int>& keep;  // a pruned conv's kept output channels (empty: every one)
};

struct EspdlModel;
struct EspdlExport;
class ExportGraph;  // host/espdl/export_graph.h

struct HostLayer {
  tv::LayerType type;
  // The layer from its config object (the defaults of every field it has).
  tv::Hook<tv::LayerDesc(const LayerConfig& c)> config;
  // Copies the kept parameters; *kept: the kept channels of the current tensor (original indices),
  // updated to those of the layer's output.
  tv::Hook<void(const PruneStep& s, std::vector<int>* kept)> prune;
  // Emits layer i's node(s) into g (or refuses the layer: tvh::Error); returns the last layer it
  // consumed (a ReLU fused into a Conv or Gemm is consumed with it).
  tv::Hook<int(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out)> espdl;
};

// The row of a type (a valid LayerType).
const HostLayer& host_layer(tv::LayerType type);

// 0, 1, ..., n - 1.
std::vector<int> channel_range(int n);

}  // namespace tvh
