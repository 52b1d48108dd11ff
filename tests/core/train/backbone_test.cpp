// Starting from a backbone (tv/train/backbone.h) and the built-in ones (tv/backbones/builtin_backbones.h):
// which networks a backbone fits, that its layers are copied and its head dropped, that a class whose
// photos say nothing keeps a zero row, the start names, and that every built-in backbone is what its file
// says (a backbone of the default network for its input, its pretraining head dropped).
#include "tv/train/backbone.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tv/backbones/builtin_backbones.h"
#include "tv/model/blob.h"
#include "tv/train/imprint.h"
#include "tv/train/presets.h"

namespace {

// The default network (tinyvision, a small dataset) at h x w x c with k classes.
tv::ModelPlan default_plan(int h, int w, int c, int k, long images = 100) {
  tv::DataShape data;
  data.height = h;
  data.width = w;
  data.channels = c;
  data.images = images;
  tv::ModelDesc d;
  EXPECT_TRUE(tv::preset_model_for("tinyvision", k, data, &d));
  tv::ModelPlan p;
  EXPECT_TRUE(tv::plan_model(d, &p).ok());
  return p;
}

struct DecodedBackbone {
  tv::BlobView view;
  tv::ModelPlan plan;
  std::vector<float> params;
};

DecodedBackbone decode_builtin(const tv::BuiltinBackbone& b) {
  DecodedBackbone d;
  EXPECT_TRUE(tv::blob_decode(b.blob, b.size, &d.view).ok()) << b.name;
  EXPECT_TRUE(tv::plan_model(d.view.model, &d.plan).ok()) << b.name;
  d.params.resize(d.plan.param_count);
  EXPECT_TRUE(tv::blob_load_float_params(d.view, d.plan, d.params.data()).ok()) << b.name;
  return d;
}

}  // namespace

TEST(Backbone, StartModesReadBackTheirNames) {
  for (tv::StartMode m : {tv::StartMode::Scratch, tv::StartMode::Backbone, tv::StartMode::Auto}) {
    tv::StartMode back = tv::StartMode::Scratch;
    ASSERT_TRUE(tv::parse_start_mode(tv::start_mode_name(m), &back));
    EXPECT_EQ(back, m);
  }
  tv::StartMode m;
  EXPECT_FALSE(tv::parse_start_mode("Backbone", &m));
  EXPECT_FALSE(tv::parse_start_mode("", &m));
  EXPECT_FALSE(tv::parse_start_mode(nullptr, &m));
  EXPECT_TRUE(tv::backbone_helps(1));
  EXPECT_TRUE(tv::backbone_helps(tv::kBackboneMaxPhotosPerClass));
  EXPECT_FALSE(tv::backbone_helps(tv::kBackboneMaxPhotosPerClass + 1));
}

TEST(Backbone, EveryBuiltInBackboneIsTheDefaultNetworkForItsInputWithoutItsHead) {
  int found = 0;
  for (int c : {1, 3}) {
    const tv::BuiltinBackbone* b = tv::builtin_backbone(64, 64, c);
    ASSERT_NE(b, nullptr) << "64x64x" << c;
    ++found;
    EXPECT_EQ(std::string(b->name), "tinyvision-64x64x" + std::to_string(c));
    EXPECT_EQ((uintptr_t)b->blob % 16, 0u) << "the header's blob is 16-byte aligned";
    const DecodedBackbone d = decode_builtin(*b);
    const std::string prov(d.view.provenance, d.view.provenance_len);
    EXPECT_NE(prov.find("\nrole=backbone\n"), std::string::npos) << prov;
    EXPECT_NE(prov.find("\ngenerator=procedural:"), std::string::npos) << prov;
    EXPECT_NE(prov.find("\nhead=dropped ("), std::string::npos) << prov;
    EXPECT_EQ(d.view.model.num_classes, 2);
    EXPECT_FALSE(d.view.is_int8());
    // It fits the default network of its input at any class count the board runs, and nothing else.
    for (int k = 2; k <= 16; ++k) EXPECT_TRUE(tv::backbone_fits(d.plan, default_plan(64, 64, c, k))) << k;
    EXPECT_FALSE(tv::backbone_fits(d.plan, default_plan(64, 64, 4 - c, 3)));
    EXPECT_FALSE(tv::backbone_fits(d.plan, default_plan(96, 96, c, 3)));
    EXPECT_FALSE(tv::backbone_fits(d.plan, default_plan(64, 64, c, 3, 20000))) << "the wide network";
    tv::ModelDesc webmcu;
    tv::webmcu_model(3, &webmcu);
    tv::ModelPlan wp;
    ASSERT_TRUE(tv::plan_model(webmcu, &wp).ok());
    if (c == 3) EXPECT_FALSE(tv::backbone_fits(d.plan, wp));
    // The head dropped: its rows are zero.
    const tv::LayerPlan& head = d.plan.layers[tv::imprint_layer(d.plan)];
    for (size_t i = 0; i < head.weight_count + head.bias_count; ++i) ASSERT_EQ(d.params[head.param_offset + i], 0.f);
  }
  EXPECT_EQ(found, 2);
  EXPECT_EQ(tv::builtin_backbone(28, 28, 1), nullptr);
  EXPECT_EQ(tv::builtin_backbone(64, 64, 2), nullptr);
}

TEST(Backbone, ParamsCopyEveryLayerButTheHeadWhichIsZero) {
  const DecodedBackbone d = decode_builtin(*tv::builtin_backbone(64, 64, 3));
  const tv::ModelPlan target = default_plan(64, 64, 3, 5);
  std::vector<float> p(target.param_count, 7.f);
  ASSERT_TRUE(tv::backbone_params(d.plan, d.params.data(), target, p.data()).ok());
  const int head = tv::imprint_layer(target);
  for (int i = 0; i < target.num_layers; ++i) {
    const tv::LayerPlan& t = target.layers[i];
    const size_t n = t.weight_count + t.bias_count;
    for (size_t j = 0; j < n; ++j) {
      const float want = i == head ? 0.f : d.params[d.plan.layers[i].param_offset + j];
      ASSERT_EQ(std::memcmp(&p[t.param_offset + j], &want, sizeof want), 0) << "layer " << i << " value " << j;
    }
  }
  // Not its network: refused, the output untouched.
  const tv::ModelPlan gray = default_plan(64, 64, 1, 5);
  std::vector<float> q(gray.param_count, 7.f);
  EXPECT_EQ(tv::backbone_params(d.plan, d.params.data(), gray, q.data()).code, tv::StatusCode::InvalidArgument);
  EXPECT_EQ(q, std::vector<float>(gray.param_count, 7.f));
  EXPECT_EQ(tv::backbone_params(d.plan, nullptr, target, p.data()).code, tv::StatusCode::InvalidArgument);
}

TEST(Backbone, AClassWhosePhotosSayNothingKeepsAZeroRowAndTheOthersAreImprinted) {
  const tv::ModelPlan plan = default_plan(64, 64, 3, 3);
  const tv::LayerPlan& head = plan.layers[tv::imprint_layer(plan)];
  const size_t F = head.in.size();
  // Class 0: features along one direction; class 1: the very same features (nothing tells it apart
  // from class 0); class 2: another direction.
  const int n = 6;
  std::vector<float> features(n * F, 0.f), scratch(2 * n + 2);
  const int labels[n] = {0, 0, 1, 1, 2, 2};
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < F; ++k) features[i * F + k] = labels[i] == 2 ? (k % 2 ? 1.f : 0.f) : (k % 2 ? 0.f : 1.f);
  std::vector<float> params(plan.param_count, 0.f);
  for (size_t k = head.param_offset; k < plan.param_count; ++k) params[k] = 3.f;  // overwritten or zeroed
  // Class 1 alone among classes 0 and 1: its difference from class 0 is zero.
  ASSERT_TRUE(tv::imprint_head(plan, params.data(), features.data(), labels, n, scratch.data()).ok());
  auto row_norm = [&](int c) {
    float s = 0.f;
    for (size_t k = 0; k < F; ++k) s += params[head.param_offset + c * F + k] * params[head.param_offset + c * F + k];
    return s;
  };
  EXPECT_GT(row_norm(0), 0.f);
  EXPECT_EQ(row_norm(1), 0.f);
  EXPECT_EQ(params[head.param_offset + head.weight_count + 1], 0.f);
  EXPECT_GT(row_norm(2), 0.f);
  // A non-finite feature stops it, naming the class.
  features[4 * F] = std::numeric_limits<float>::infinity();
  const tv::Status st = tv::imprint_head(plan, params.data(), features.data(), labels, n, scratch.data());
  EXPECT_EQ(st.code, tv::StatusCode::NonFiniteActivation);
}
