
// The whole network's gradient: trainer_sample's backward pass (every layer's backward chained through
// the shared scratch buffer, the first-layer cut-off, the fused conv-pool path of the fast kernels)
// against central finite differences of trainer_sample's own loss, for every parameter of small
// models that hold every layer type, with both losses and with distillation on top.
// (the check and its tolerance: gradient_check.h).
#include <gtest/gtest.h>

#include "core/gradient_check.h"

namespace {

using gradient_check::check_network;

// Every layer type; the first layer has weights (the cut-off skips its input gradient) and is
// followed by activations and a max pool (the fast kernels' fused conv-pool backward).
tv::ModelDesc every_layer_model() {
  tv::ModelDesc d;
  d.input.height = d.input.width = 8;
  d.num_classes = 3;
  tv::add_layer(&d, tv::conv2d_layer(4, 3, 1, tv::Padding::Same));
  tv::add_layer(&d, tv::leaky_relu_layer(0.1f));
  tv::add_layer(&d, tv::maxpool_layer(2));
  tv::add_layer(&d, tv::depthwise_layer(3));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::conv2d_layer(6, 1));
  tv::add_layer(&d, tv::clip_layer(-4.f, 4.f));
  tv::add_layer(&d, tv::avgpool_layer(2, 1));
  tv::add_layer(&d, tv::adaptive_avgpool_layer(2, 2));
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer(5));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::dense_layer());
  return d;
}

// Layers without weights before the first one that has them: backward stops at that layer.
tv::ModelDesc pool_first_model() {
  tv::ModelDesc d;
  d.input.height = d.input.width = 8;
  d.num_classes = 3;
  tv::add_layer(&d, tv::maxpool_layer(2));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::conv2d_layer(5, 3, 1, tv::Padding::Same));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::global_avgpool_layer());
  tv::add_layer(&d, tv::dense_layer());
  return d;
}

TEST(NetGradient, EveryLayerTypeChainedMatchesFiniteDifferences) {
  check_network(every_layer_model(), tv::LossKind::CrossEntropy, "cross-entropy");
  check_network(every_layer_model(), tv::LossKind::MSE, "mse");
}

TEST(NetGradient, DistillationOnTopOfEitherLossMatchesFiniteDifferences) {
  // Soft targets over the first two outputs (the old classes) that the network's logits do not give, so
  // the distillation term's gradient is far from zero.
  const gradient_check::Distill distill{{0.7f, 0.3f}};
  check_network(every_layer_model(), tv::LossKind::CrossEntropy, "cross-entropy + distillation", &distill);
  check_network(every_layer_model(), tv::LossKind::MSE, "mse + distillation", &distill);
  // ...and the term is there: the same sample's loss with and without its soft targets.
  gradient_check::Net net(every_layer_model(), tv::LossKind::CrossEntropy);
  net.tr.opt.distill_weight = tv::kDistillWeight;
  net.tr.opt.distill_temperature = tv::kDistillTemperature;
  net.tr.opt.distill_old_classes = 2;
  const std::vector<uint8_t> image(net.plan.input.size(), 100);
  const float plain = net.loss(image, 1);
  net.soft_target = distill.targets.data();
  EXPECT_GT(net.loss(image, 1), plain + 1e-3f);  // KL >= 0, and these targets are not the model's
}

TEST(NetGradient, ADetectorsPerCellLossMatchesFiniteDifferences) {
  // 48x48x1 -> three stride-2 convolutions -> a 6x6 grid of (background + 2 classes) logits; object cells
  // weigh 8 (the detect preset's weight)
  tv::ModelDesc d;
  d.input.height = d.input.width = 48;
  d.input.channels = 1;
  d.input.order = tv::ChannelOrder::GRAY;
  d.num_classes = 3;
  d.task = tv::Task::Detect;
  tv::add_layer(&d, tv::conv2d_layer(3, 3, 2, tv::Padding::Same));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::depthwise_layer(3, 2, tv::Padding::Same));
  tv::add_layer(&d, tv::conv2d_layer(4, 1));
  tv::add_layer(&d, tv::leaky_relu_layer(0.1f));
  tv::add_layer(&d, tv::avgpool_layer(2));
  tv::add_layer(&d, tv::conv2d_layer(3, 1));
  std::vector<uint8_t> targets(36, 0);
  targets[7] = 1;
  targets[8] = 1;
  targets[29] = 2;
  check_network(d, tv::LossKind::CrossEntropy, "detector", nullptr, targets.data());
}

TEST(NetGradient, LayersBeforeTheFirstWeightsAreSkipped) {
  check_network(pool_first_model(), tv::LossKind::CrossEntropy, "pool first");
}

}  // namespace
