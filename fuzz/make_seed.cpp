// Writes a small valid .tvb (a tiny float model) to argv[1], its int8 twin (tvquant's rules) to
// argv[1] + ".q8.tvb" and a small detector (a 'TASK' section) to argv[1] + ".det.tvb": the fuzzers' seed inputs.
#include <cstdio>
#include <vector>

#include "host/base/files.h"
#include "host/model/model_io.h"
#include "host/quant/quantize.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  tv::ModelDesc d;
  tv::set_input(&d, 8, 8, 1);
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
  tvh::Dataset ds;
  ds.height = ds.width = 8;
  ds.channels = 1;
  for (int i = 0; i < 4; ++i) {
    ds.labels.push_back(i % 2);
    for (int k = 0; k < 64; ++k) ds.pixels.push_back((uint8_t)((i * 37 + k * 11) & 255));
  }
  const std::vector<int> idx = {0, 1, 2, 3};
  tvh::CalibrationStats stats = tvh::calibrate(*plan, p.data(), ds, idx, tvh::QuantOptions());
  tvh::QuantResult q = tvh::quantize_model(*plan, p.data(), stats, {"a", "b"}, "tool=make_seed\n", tvh::QuantOptions());
  tvh::write_file_atomic(std::string(argv[1]) + ".q8.tvb", q.blob);
  tv::ModelDesc det;  // 48x48x1 -> a 6x6 grid of background + 1 class
  tv::set_input(&det, 48, 48, 1);
  det.num_classes = 2;
  det.task = tv::Task::Detect;
  tv::add_layer(&det, tv::conv2d_layer(2, 3, 4, tv::Padding::Same));
  tv::add_layer(&det, tv::maxpool_layer(2));
  tv::add_layer(&det, tv::conv2d_layer(2, 1));
  auto det_plan = tvh::plan_or_throw(det, "seed");
  std::vector<float> dp(det_plan->param_count);
  tv::he_init(*det_plan, dp.data(), 1);
  tvh::save_float_model(std::string(argv[1]) + ".det.tvb", *det_plan, dp.data(), {"_background", "a"},
                        "tool=make_seed\n");
  return 0;
}
