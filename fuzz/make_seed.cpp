// Writes a small valid .tvb (a tiny float model) to argv[1]: the fuzzers' seed input.
#include <cstdio>
#include <vector>

#include "host/model_io.h"
#include "tv/net.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  tv::ModelDesc d;
  d.input.height = d.input.width = 8;
  d.input.channels = 1;
  d.input.order = tv::ChannelOrder::GRAY;
  d.num_classes = 2;
  tv::add_layer(&d, tv::conv2d_layer(2, 3));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::maxpool_layer(2));
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto plan = tvh::plan_or_throw(d, "seed");
  std::vector<float> p(plan->param_count);
  tv::he_init(*plan, p.data(), 1);
  tvh::save_float_model(argv[1], *plan, p.data(), {"a", "b"}, "tool=make_seed\n");
  return 0;
}
