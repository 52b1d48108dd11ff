// The int8 engine's glue (tv/int8/q8_model.h): q8_bind refuses what the kernels cannot run (fan-in
// and pooling-area limits), and q8_run / q8_infer_u8 return the status of a failing kernel instead
// of handing back an untouched buffer.
#include "tv/int8/q8_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "tv/int8/int8_ops.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"
#include "tv/train/presets.h"

namespace {

// An int8 blob of `desc` with all-zero weights and biases, every activation at exponent -7 and every
// weight exponent 0 (shift 0), so that q8_bind's exponent checks pass.
struct Int8Blob {
  tv::ModelDesc desc;
  std::unique_ptr<tv::ModelPlan> plan = std::make_unique<tv::ModelPlan>();
  std::vector<uint8_t> bytes;
  std::unique_ptr<tv::BlobView> view = std::make_unique<tv::BlobView>();

  explicit Int8Blob(const tv::ModelDesc& d) : desc(d) {
    EXPECT_TRUE(tv::plan_model(desc, plan.get()).ok());
    std::vector<std::vector<int8_t>> w;
    std::vector<std::vector<int32_t>> b;
    std::vector<tv::BlobTensor> t;
    for (int i = 0; i < plan->num_layers; ++i) {
      const tv::LayerPlan& lp = plan->layers[i];
      if (!tv::layer_has_params(desc.layers[i].type)) continue;
      w.emplace_back(lp.weight_count, 0);
      b.emplace_back(lp.bias_count, 0);
    }
    size_t k = 0;
    for (int i = 0; i < plan->num_layers; ++i) {
      const tv::LayerPlan& lp = plan->layers[i];
      if (!tv::layer_has_params(desc.layers[i].type)) continue;
      tv::BlobTensor wt;
      std::snprintf(wt.name, sizeof wt.name, "l%d.w", i);
      wt.dtype = tv::DType::I8;
      wt.layer = (uint16_t)i;
      wt.ndim = 1;
      wt.dims[0] = (uint32_t)lp.weight_count;
      wt.data = w[k].data();
      wt.bytes = (uint32_t)lp.weight_count;
      tv::BlobTensor bt;
      std::snprintf(bt.name, sizeof bt.name, "l%d.b", i);
      bt.dtype = tv::DType::I32;
      bt.role = tv::TensorRole::Bias;
      bt.layer = (uint16_t)i;
      bt.ndim = 1;
      bt.dims[0] = (uint32_t)lp.bias_count;
      bt.exponent = -7;
      bt.data = b[k].data();
      bt.bytes = (uint32_t)(lp.bias_count * 4);
      t.push_back(wt);
      t.push_back(bt);
      ++k;
    }
    std::vector<int8_t> act((size_t)plan->num_layers + 1, -7);
    const char* labels[2] = {"a", "b"};
    tv::BlobContents c;
    c.model = &desc;
    c.labels = labels;
    c.num_labels = 2;
    c.tensors = t.data();
    c.num_tensors = (int)t.size();
    c.act_exps = act.data();
    c.num_act_exps = (int)act.size();
    c.flags = tv::kBlobFlagInt8;
    bytes.resize(tv::blob_encoded_size(c));
    size_t written = 0;
    EXPECT_TRUE(tv::blob_encode(c, bytes.data(), bytes.size(), &written).ok());
    EXPECT_TRUE(tv::blob_decode(bytes.data(), bytes.size(), view.get()).ok());
  }
  tv::Status bind(tv::Q8Model* m) const { return tv::q8_bind(*view, *plan, m); }
};

tv::ModelDesc gray_model(int h, int w) {
  tv::ModelDesc d;
  tv::set_input(&d, h, w, 1);
  d.num_classes = 2;
  return d;
}

TEST(Q8Bind, RefusesADenseFanInAboveTheKernelsLimit) {
  // 512 x 256 = 2^17 inputs: the largest the int32 accumulator of dense_s8 takes.
  tv::ModelDesc at = gray_model(512, 256);
  tv::add_layer(&at, tv::flatten_layer());
  tv::add_layer(&at, tv::dense_layer());
  auto m = std::make_unique<tv::Q8Model>();
  EXPECT_TRUE(Int8Blob(at).bind(m.get()).ok());

  tv::ModelDesc over = gray_model(513, 256);
  tv::add_layer(&over, tv::flatten_layer());
  tv::add_layer(&over, tv::dense_layer());
  const tv::Status st = Int8Blob(over).bind(m.get());
  EXPECT_EQ(st.code, tv::StatusCode::NotSupported);
  EXPECT_EQ(st.layer, 1);
  EXPECT_EQ(st.a, 513 * 256);
  EXPECT_EQ(st.b, tv::kInt8MaxFanIn);
}

TEST(Q8Bind, RefusesAConvFanInAboveTheKernelsLimit) {
  // A 15 x 15 filter over 583 channels: 131175 taps > 2^17. The channels come from a 1x1 conv.
  tv::ModelDesc d = gray_model(15, 15);
  tv::add_layer(&d, tv::conv2d_layer(583, 1));
  tv::add_layer(&d, tv::conv2d_layer(2, 15));
  tv::add_layer(&d, tv::flatten_layer());
  auto m = std::make_unique<tv::Q8Model>();
  const tv::Status st = Int8Blob(d).bind(m.get());
  EXPECT_EQ(st.code, tv::StatusCode::NotSupported);
  EXPECT_EQ(st.layer, 1);
  EXPECT_EQ(st.a, 15 * 15 * 583);
}

TEST(Q8Bind, RefusesAPoolingAreaAboveTheKernelsLimit) {
  auto m = std::make_unique<tv::Q8Model>();
  for (bool adaptive : {false, true}) {
    // 1024 x 1024 = 2^20 cells: the largest window the averaging kernels take.
    tv::ModelDesc at = gray_model(1024, 1024);
    tv::add_layer(&at, adaptive ? tv::adaptive_avgpool_layer(1, 1) : tv::global_avgpool_layer());
    tv::add_layer(&at, tv::dense_layer());
    EXPECT_TRUE(Int8Blob(at).bind(m.get()).ok()) << adaptive;

    tv::ModelDesc over = gray_model(1025, 1024);
    tv::add_layer(&over, adaptive ? tv::adaptive_avgpool_layer(1, 1) : tv::global_avgpool_layer());
    tv::add_layer(&over, tv::dense_layer());
    const tv::Status st = Int8Blob(over).bind(m.get());
    EXPECT_EQ(st.code, tv::StatusCode::NotSupported) << adaptive;
    EXPECT_EQ(st.layer, 0) << adaptive;
    EXPECT_EQ(st.a, 1025 * 1024) << adaptive;
    EXPECT_EQ(st.b, tv::kInt8MaxPoolArea) << adaptive;
  }
}

// A model altered after binding so that its conv has a negative shift: the kernel refuses, and the
// refusal reaches the caller with the layer's index; the outputs are left alone.
TEST(Q8Run, ReturnsTheStatusOfAFailingKernel) {
  tv::ModelDesc d = gray_model(8, 8);
  tv::add_layer(&d, tv::conv2d_layer(4, 3));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::global_avgpool_layer());
  tv::add_layer(&d, tv::dense_layer());
  Int8Blob blob(d);
  auto m = std::make_unique<tv::Q8Model>();
  ASSERT_TRUE(blob.bind(m.get()).ok());
  std::vector<int8_t> work(tv::q8_memory(*blob.plan).work_bytes);
  std::vector<uint8_t> image(64, 200);
  std::vector<int8_t> input(64, 5);
  const int8_t* out = nullptr;
  ASSERT_TRUE(tv::q8_run(*m, input.data(), work.data(), &out).ok());
  EXPECT_NE(out, nullptr);
  float probs[2] = {-1.f, -1.f};
  ASSERT_TRUE(tv::q8_infer_u8(*m, image.data(), work.data(), probs).ok());
  EXPECT_FLOAT_EQ(probs[0] + probs[1], 1.f);

  m->weight_exp[3] = 1;  // the dense layer's shift e_out - e_in - e_w becomes -1
  out = nullptr;
  tv::Status st = tv::q8_run(*m, input.data(), work.data(), &out);
  EXPECT_EQ(st.code, tv::StatusCode::BadParameter);
  EXPECT_EQ(st.layer, 3);
  EXPECT_EQ(out, nullptr);
  float untouched[2] = {-1.f, -1.f};
  int8_t logits[2] = {99, 99};
  st = tv::q8_infer_u8(*m, image.data(), work.data(), untouched, logits);
  EXPECT_EQ(st.code, tv::StatusCode::BadParameter);
  EXPECT_EQ(st.layer, 3);
  EXPECT_EQ(untouched[0], -1.f);
  EXPECT_EQ(logits[0], 99);

  m->weight_exp[3] = 0;
  m->weights[0] = nullptr;  // a conv without weights: InvalidArgument at layer 0
  st = tv::q8_run(*m, input.data(), work.data(), &out);
  EXPECT_EQ(st.code, tv::StatusCode::InvalidArgument);
  EXPECT_EQ(st.layer, 0);
}

}  // namespace
