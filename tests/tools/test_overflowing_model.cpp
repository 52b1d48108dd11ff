// A valid model whose finite weights overflow float in the forward pass (issue 20): every path that runs
// it refuses with one sentence naming the layer: the core's infer_u8 (classify, --eval, training's
// start, pruning's evaluation) and tvquant's calibration (which crashed with SIGSEGV on its histogram).
// Through the real binaries as child processes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "host/model/model_io.h"
#include "test_support.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;

namespace {

using tvtest::contains;

// A webmcu model of the shapes classes whose He-initialized weights are all multiplied by `scale`: every
// weight finite, the second convolution's sums past float's range at 1e37 (the first stays finite).
std::vector<uint8_t> huge_model_bytes(float scale) {
  tv::ModelDesc d;
  tv::webmcu_model(3, &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count);
  tv::he_init(*plan, p.data(), 3);
  for (float& x : p) x *= scale;
  return tvh::encode_float_blob(*plan, p.data(), {"0blank", "1circle", "2cross"}, "tool=test\npreset=webmcu\n");
}
std::string write_model(const std::string& path, float scale) {
  const std::vector<uint8_t> b = huge_model_bytes(scale);
  std::ofstream(path, std::ios::binary).write((const char*)b.data(), (std::streamsize)b.size());
  return path;
}

}  // namespace

TEST(OverflowingModel, TheCoreNamesTheFirstLayerWhoseOutputIsNotFinite) {
  const tvh::LoadedModel m = tvh::decode_model(huge_model_bytes(1e37f), "huge");
  for (float w : m.params) ASSERT_TRUE(std::isfinite(w));
  tvh::AlignedBuffer arena(tv::inference_memory(*m.plan).work_bytes);
  tv::Inference inf;
  ASSERT_TRUE(tv::inference_init(&inf, m.plan.get(), m.params.data(), arena.data(), arena.size()).ok());
  std::vector<uint8_t> image(m.plan->input.size());
  for (size_t k = 0; k < image.size(); ++k) image[k] = (uint8_t)(k * 37);
  std::vector<float> probs(3);
  const tv::Status st = tv::infer_u8(inf, image.data(), probs.data());
  EXPECT_EQ(st.code, tv::StatusCode::NonFiniteActivation);
  EXPECT_GT(st.layer, 0) << "the first convolution (27 pixels times 1e37 at most) is still finite";
  EXPECT_LT(st.layer, m.plan->num_layers);
  // The same model at a sane scale runs.
  const tvh::LoadedModel ok = tvh::decode_model(huge_model_bytes(1.f), "sane");
  tv::Inference inf2;
  ASSERT_TRUE(tv::inference_init(&inf2, ok.plan.get(), ok.params.data(), arena.data(), arena.size()).ok());
  EXPECT_TRUE(tv::infer_u8(inf2, image.data(), probs.data()).ok());
  // The bit test finds Inf and NaN (even in a fast-math build) and nothing else.
  const float values[] = {1.f, -3e38f, INFINITY, NAN};
  EXPECT_TRUE(tv::check_finite_output(0, values, 2).ok());
  EXPECT_EQ(tv::check_finite_output(4, values, 3).a, 2);
  EXPECT_EQ(tv::check_finite_output(4, values + 3, 1).layer, 4);
}

TEST(OverflowingModel, EveryToolThatRunsItRefusesNamingTheLayer) {
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  const std::string ds = tvtest::shapes_subset("ovf-ds", 4);
  const std::string dir = tvtest::temp_dir("ovf");
  const std::string model = write_model(dir + "/huge.tvb", 1e37f);
  const std::string photo = ds + "/1circle/img_000.jpg";
  const std::vector<std::string> cmds = {
      tvtest::tool_command("tvquant") + " " + tvtest::quoted(model) + " --calib " + tvtest::quoted(ds) + " -o " +
          tvtest::quoted(dir + "/q.tvb"),
      tvtest::tool_command("tvquant") + " " + tvtest::quoted(model) + " --calib " + tvtest::quoted(ds) +
          " --calibration minmax -o " + tvtest::quoted(dir + "/q.tvb"),
      tvtest::tool_command("tvquant") + " prune " + tvtest::quoted(model) + " " + tvtest::quoted(ds) +
          " --epochs 0 -o " + tvtest::quoted(dir + "/p.tvb"),
      tvtest::tool_command("tvtrain") + " classify " + tvtest::quoted(model) + " " + tvtest::quoted(photo),
      tvtest::tool_command("tvtrain") + " classify " + tvtest::quoted(model) + " " + tvtest::quoted(photo) + " --json",
      tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) + " --init " + tvtest::quoted(model) + " --eval",
      tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) + " --init " + tvtest::quoted(model) +
          " --epochs 1 -o " + tvtest::quoted(dir + "/t.tvb"),
  };
  for (const std::string& cmd : cmds) {
    const tvtest::CommandResult r = tvtest::run_capture(cmd);
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;  // not 139 (SIGSEGV), not 0
    EXPECT_TRUE(contains(r.err, "the model cannot run on ") && contains(r.err, "output is infinite or NaN") &&
                contains(r.err, "layer "))
        << cmd << "\n"
        << r.err;
    EXPECT_FALSE(contains(r.out, "nan") || contains(r.out, "NaN")) << cmd << "\n" << r.out;
    EXPECT_FALSE(contains(r.err, "epoch 1/")) << "trained from it: " << cmd;
  }
  for (const char* f : {"q.tvb", "p.tvb", "t.tvb"}) EXPECT_FALSE(fs::exists(dir + "/" + f)) << f;
  // Control: the same model at a sane scale goes through.
  const std::string sane = write_model(dir + "/sane.tvb", 1.f);
  const tvtest::CommandResult r = tvtest::run_capture(tvtest::tool_command("tvtrain") + " classify " +
                                                      tvtest::quoted(sane) + " " + tvtest::quoted(photo));
  EXPECT_EQ(r.status, 0) << r.err;
}
