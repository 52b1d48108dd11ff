// The quantizer (host/quant/quantize.h), the int8 reference interpreter (host/quant/q8_reference.h) and channel
// pruning (host/quant/prune.h), in process.
//
// The S3-limit tests craft float models whose naive int8 version breaks one ESP32-S3 rule (an
// accumulation beyond 20 bits, a bias beyond 20 bits, a negative shift), and check that the report
// names the layer, that the emitted model keeps the rule, and that its int8 outputs equal, bit for bit,
// (a) the core's q8_run, (b) a plain reference interpreter with exact accumulators and (c) the same
// reference with accumulators wrapped to 20-bit lanes, as the device would compute them.
#include "host/quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/quant/prune.h"
#include "host/quant/q8_reference.h"
#include "test_support.h"
#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace {

// A dataset in memory: n images of h x w x c with pixels from `pixel(image, index)`.
template <typename F>
tvh::Dataset make_dataset(int h, int w, int c, int n, int classes, F pixel) {
  tvh::Dataset ds;
  ds.source = "memory";
  for (int k = 0; k < classes; ++k) ds.classes.push_back("c" + std::to_string(k));
  ds.height = h;
  ds.width = w;
  ds.channels = c;
  ds.order = c == 1 ? tv::ChannelOrder::GRAY : tv::ChannelOrder::RGB;
  const size_t bytes = (size_t)h * w * c;
  ds.pixels.resize(bytes * n);
  for (int i = 0; i < n; ++i) {
    ds.labels.push_back(i % classes);
    ds.paths.push_back("img" + std::to_string(i));
    for (size_t k = 0; k < bytes; ++k) ds.pixels[(size_t)i * bytes + k] = pixel(i, k);
  }
  return ds;
}

tvh::Dataset random_dataset(int h, int w, int c, int n, int classes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<uint8_t> px((size_t)h * w * c * n);
  for (auto& p : px) p = (uint8_t)d(rng);
  return make_dataset(h, w, c, n, classes, [&](int i, size_t k) { return px[(size_t)i * h * w * c + k]; });
}

std::vector<int> first_n(int n) {
  std::vector<int> v((size_t)n);
  for (int i = 0; i < n; ++i) v[(size_t)i] = i;
  return v;
}

std::vector<std::string> labels_for(const tv::ModelPlan& plan) {
  std::vector<std::string> l;
  for (int i = 0; i < plan.desc.num_classes; ++i) l.push_back("c" + std::to_string(i));
  return l;
}

std::unique_ptr<tv::ModelPlan> plan_of(const tv::ModelDesc& d) {
  auto p = std::make_unique<tv::ModelPlan>();
  tv::Status st = tv::plan_model(d, p.get());
  EXPECT_TRUE(st.ok()) << tvh::status_message(st, &d);
  return p;
}

// A network with He-init weights from `seed`; by preset name for `classes` classes.
struct InitModel {
  std::unique_ptr<tv::ModelPlan> plan;
  std::vector<float> params;
};
InitModel he_model(const tv::ModelDesc& d, uint64_t seed) {
  InitModel m{plan_of(d), {}};
  m.params.resize(m.plan->param_count);
  tv::he_init(*m.plan, m.params.data(), seed);
  return m;
}
InitModel he_model(const char* preset, int classes, uint64_t seed) {
  tv::ModelDesc d;
  EXPECT_TRUE(tv::preset_model(preset, classes, &d)) << preset;
  return he_model(d, seed);
}

// A model input of h x w x c at pixel / 255.
tv::ModelDesc input_model(int h, int w, int c, int classes) {
  tv::ModelDesc d;
  d.input.height = (uint16_t)h;
  d.input.width = (uint16_t)w;
  d.input.channels = (uint16_t)c;
  d.input.order = c == 1 ? tv::ChannelOrder::GRAY : tv::ChannelOrder::RGB;
  d.num_classes = (uint16_t)classes;
  return d;
}

bool mentions(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
  for (const auto& l : lines)
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// The emitted blob bound by the core, and the reference interpreter over the same tensors.
struct Bound {
  std::unique_ptr<tv::BlobView> view = std::make_unique<tv::BlobView>();
  std::unique_ptr<tv::Q8Model> q8 = std::make_unique<tv::Q8Model>();
  tvh::Q8Reference ref;
  tvh::AlignedBuffer work;
};

void bind_blob(const tv::ModelPlan& plan, const std::vector<uint8_t>& blob, Bound* b) {
  ASSERT_TRUE(tv::blob_decode(blob.data(), blob.size(), b->view.get()).ok());
  tv::Status st = tv::q8_bind(*b->view, plan, b->q8.get());
  ASSERT_TRUE(st.ok()) << tvh::status_message(st, &plan.desc);
  b->ref = tvh::q8_reference_load(*b->view, plan);
  b->work = tvh::AlignedBuffer(tv::q8_memory(plan).work_bytes);
}

// q8_run == exact reference == 20-bit-lane reference on one uint8 image.
void expect_bit_exact(const tv::ModelPlan& plan, Bound& b, const uint8_t* image, const std::string& what) {
  std::vector<int8_t> in = tvh::q8_reference_input(plan, b.ref.act_exps[0], image);
  const int k = plan.desc.num_classes;
  std::vector<int8_t> exact = tvh::q8_reference_run(b.ref, in.data(), 0);
  std::vector<int8_t> lanes = tvh::q8_reference_run(b.ref, in.data(), 20);
  const int8_t* core = nullptr;
  ASSERT_TRUE(tv::q8_run(*b.q8, in.data(), (int8_t*)b.work.data(), &core).ok()) << what;
  for (int j = 0; j < k; ++j) {
    EXPECT_EQ(core[j], exact[(size_t)j]) << what << ": q8_run vs the reference, output " << j;
    EXPECT_EQ(lanes[(size_t)j], exact[(size_t)j]) << what << ": 20-bit lanes vs exact, output " << j;
  }
  // q8_infer_u8 quantizes the image the same way.
  std::vector<int8_t> logits((size_t)k);
  ASSERT_TRUE(tv::q8_infer_u8(*b.q8, image, (int8_t*)b.work.data(), nullptr, logits.data()).ok()) << what;
  for (int j = 0; j < k; ++j) EXPECT_EQ(logits[(size_t)j], exact[(size_t)j]) << what << ": q8_infer_u8, output " << j;
}

tvh::QuantResult quantize(const tv::ModelPlan& plan, const std::vector<float>& params, const tvh::Dataset& ds,
                          const tvh::QuantOptions& o = tvh::QuantOptions()) {
  const std::vector<int> idx = first_n((int)ds.size());
  tvh::CalibrationStats st = tvh::calibrate(plan, params.data(), ds, idx, o);
  return tvh::quantize_model(plan, params.data(), st, labels_for(plan), "tool=test\n", o, &ds, &idx);
}

}  // namespace

TEST(Quantize, ExponentRuleIsEspPpqMinMax) {
  EXPECT_EQ(tvh::exponent_for_range(1.0), -6);            // pixel / 255: scale 2/255 -> 2^-6
  EXPECT_EQ(tvh::exponent_for_range(127.5 / 128.0), -7);  // 2m/255 = 2^-7 exactly
  EXPECT_EQ(tvh::exponent_for_range(127.5 / 128.0 * 1.0001), -6);
  EXPECT_EQ(tvh::exponent_for_range(2.757), -5);
  EXPECT_EQ(tvh::exponent_for_range(127.5), 0);
  EXPECT_EQ(tvh::exponent_for_range(1000.0), 3);
  // Every value up to m stays within the int8 range at the chosen exponent (after rounding half up).
  for (double m : {0.001, 0.3, 1.0, 2.0, 3.158, 99.0}) {
    const int e = tvh::exponent_for_range(m);
    EXPECT_LE(std::ldexp(m, -e), 127.5) << m;
    EXPECT_GT(std::ldexp(m, -(e - 1)), 127.5) << m;  // and one exponent finer would not hold it
  }
}

TEST(Quantize, AccumulatorOverflowIsReportedAndAvoided) {
  // 16x16 gray -> flatten -> dense(2): output 0 adds all 256 pixels with weight 1.0. At the min/max
  // exponents (input -6, weights -6) a white image accumulates 256 * 64 * 64 = 1,048,576 > 2^19 - 1.
  tv::ModelDesc d = input_model(16, 16, 1, 2);
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto plan = plan_of(d);
  std::vector<float> params(plan->param_count, 0.f);
  float* w = params.data() + plan->layers[1].param_offset;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (int i = 0; i < 256; ++i) {
    w[i] = 1.0f;
    w[256 + i] = u(rng);
  }
  tvh::Dataset ds = random_dataset(16, 16, 1, 12, 2, 1);
  tvh::QuantResult r = quantize(*plan, params, ds);
  const tvh::LayerQuant& q = r.layers[1];
  EXPECT_TRUE(mentions(r.adjustments, "layer 1 (dense)", "20-bit accumulator")) << joined(r.adjustments);
  EXPECT_EQ(q.e_w_initial, -6);
  EXPECT_GT(q.e_w, q.e_w_initial);
  EXPECT_LE(q.acc_bound, tv::kS3AccLimit);
  EXPECT_GE(q.bound_headroom_bits, 0);
  EXPECT_GE(q.shift_min, 0);

  Bound b;
  bind_blob(*plan, r.blob, &b);
  std::vector<uint8_t> white(256, 255), black(256, 0), stripes(256);
  for (int i = 0; i < 256; ++i) stripes[(size_t)i] = (i % 2) ? 255 : 0;
  expect_bit_exact(*plan, b, white.data(), "white");
  expect_bit_exact(*plan, b, black.data(), "black");
  expect_bit_exact(*plan, b, stripes.data(), "stripes");
  for (size_t i = 0; i < ds.size(); ++i) expect_bit_exact(*plan, b, ds.image(i), "image " + std::to_string(i));
  // The white image reaches the bound of output 0 exactly: the check is tight, not loose.
  std::vector<tvh::AccObserved> obs(2);
  std::vector<int8_t> in = tvh::q8_reference_input(*plan, b.ref.act_exps[0], white.data());
  tvh::q8_reference_run(b.ref, in.data(), 0, &obs);
  EXPECT_GT(obs[1].max_final, tv::kS3AccLimit / 2);

  // The naive model (weights at their min/max exponent -6) differs on the device for the white image.
  std::vector<int8_t> naive_w(512);
  for (int i = 0; i < 512; ++i) naive_w[(size_t)i] = tv::quantize_one_s8(w[i], -6);
  std::vector<int32_t> naive_b(2, 0);
  std::vector<tv::BlobTensor> t(tv::kMaxBlobTensors);
  int nt = tv::float_tensors(*plan, params.data(), t.data());
  ASSERT_EQ(nt, 2);
  t[0].dtype = tv::DType::I8, t[0].data = naive_w.data(), t[0].bytes = 512, t[0].exponent = -6;
  t[1].dtype = tv::DType::I32, t[1].data = naive_b.data(), t[1].bytes = 8, t[1].exponent = -12;
  int8_t act[3] = {-6, -6, r.act_exps[2]};
  std::vector<std::string> lb = labels_for(*plan);
  const char* lp[2] = {lb[0].c_str(), lb[1].c_str()};
  tv::BlobContents c;
  c.model = &plan->desc, c.labels = lp, c.num_labels = 2, c.tensors = t.data(), c.num_tensors = nt;
  c.act_exps = act, c.num_act_exps = 3, c.flags = tv::kBlobFlagInt8;
  std::vector<uint8_t> naive(tv::blob_encoded_size(c));
  size_t written = 0;
  ASSERT_TRUE(tv::blob_encode(c, naive.data(), naive.size(), &written).ok());
  Bound nb;
  bind_blob(*plan, naive, &nb);
  std::vector<int8_t> nin = tvh::q8_reference_input(*plan, -6, white.data());
  EXPECT_NE(tvh::q8_reference_run(nb.ref, nin.data(), 0), tvh::q8_reference_run(nb.ref, nin.data(), 20))
      << "the unadjusted model should overflow a 20-bit lane on a white image";
}

TEST(Quantize, BiasBeyond20BitsIsReportedAndAvoided) {
  // Dense with tiny weights (exponent -13) and a bias of 1000: at e_in + e_w = -19 the bias would be
  // 1000 * 2^19 steps, far outside [-2^19, 2^19 - 1].
  tv::ModelDesc d = input_model(4, 4, 1, 2);
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto plan = plan_of(d);
  std::vector<float> params(plan->param_count, 0.f);
  float* w = params.data() + plan->layers[1].param_offset;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.01f, 0.01f);
  for (int i = 0; i < 32; ++i) w[i] = u(rng);
  w[0] = 0.01f;
  w[32] = 1000.f;  // bias of output 0
  w[33] = -3.f;
  tvh::Dataset ds = random_dataset(4, 4, 1, 10, 2, 2);
  tvh::QuantResult r = quantize(*plan, params, ds);
  const tvh::LayerQuant& q = r.layers[1];
  EXPECT_TRUE(mentions(r.adjustments, "layer 1 (dense)", "20-bit bias")) << joined(r.adjustments);
  EXPECT_EQ(q.e_w_initial, -13);
  EXPECT_GE(q.e_w, -3);
  EXPECT_LE(q.max_abs_bias, tv::kS3AccLimit);
  EXPECT_LE(q.acc_bound, tv::kS3AccLimit);
  EXPECT_GE(q.shift_min, 0);
  Bound b;
  bind_blob(*plan, r.blob, &b);
  const tv::BlobTensor* bias = tv::blob_find(*b.view, 1, tv::TensorRole::Bias);
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->exponent, q.e_in + q.e_w);
  const int32_t* qb = (const int32_t*)bias->data;
  for (int o = 0; o < 2; ++o) {
    EXPECT_GE(qb[o], -(1 << 19));
    EXPECT_LE(qb[o], (1 << 19) - 1);
  }
  EXPECT_NEAR(std::ldexp((double)qb[0], bias->exponent), 1000.0, std::ldexp(1.0, bias->exponent));
  for (size_t i = 0; i < ds.size(); ++i) expect_bit_exact(*plan, b, ds.image(i), "image " + std::to_string(i));
}

TEST(Quantize, NegativeShiftIsReportedAndAvoided) {
  // 1x2 gray -> dense(2); output 0 = x0 - (1 - 2^-10) x1. On images whose two pixels are equal (at
  // most 220) the output is at most 220/255 * 2^-10: calibrated e_out = -17, while e_in + e_w =
  // -6 + -6 = -12 -> shift -5.
  tv::ModelDesc d = input_model(1, 2, 1, 2);
  tv::add_layer(&d, tv::dense_layer());
  auto plan = plan_of(d);
  std::vector<float> params(plan->param_count, 0.f);
  float* w = params.data() + plan->layers[0].param_offset;
  w[0] = 1.f;
  w[1] = -(1.f - 1.f / 1024.f);
  tvh::Dataset ds = make_dataset(1, 2, 1, 8, 2, [](int i, size_t) { return (uint8_t)(30 * i + 10); });
  tvh::QuantResult r = quantize(*plan, params, ds);
  const tvh::LayerQuant& q = r.layers[0];
  EXPECT_TRUE(mentions(r.adjustments, "layer 0 (dense)", "shift")) << joined(r.adjustments);
  EXPECT_EQ(q.e_out_initial, -17);
  EXPECT_EQ(q.e_in + q.e_w, -12);
  EXPECT_EQ(q.e_out, q.e_in + q.e_w);
  EXPECT_EQ(q.shift_min, 0);
  EXPECT_EQ(r.act_exps[1], q.e_out);
  Bound b;
  bind_blob(*plan, r.blob, &b);
  for (size_t i = 0; i < ds.size(); ++i) expect_bit_exact(*plan, b, ds.image(i), "image " + std::to_string(i));
  uint8_t uneven[2] = {255, 0};
  expect_bit_exact(*plan, b, uneven, "uneven");
}

TEST(Quantize, PresetModelsRunBitExactAndKeepTheConvention) {
  for (const char* preset : {"webmcu", "tinyvision"}) {
    for (bool per_channel : {false, true}) {
      SCOPED_TRACE(std::string(preset) + (per_channel ? " per-channel" : " per-tensor"));
      auto [plan, params] = he_model(preset, 3, 11);
      tvh::Dataset ds = random_dataset(64, 64, 3, 6, 3, 5);
      tvh::QuantOptions o;
      o.per_channel = per_channel;
      tvh::QuantResult r = quantize(*plan, params, ds, o);
      ASSERT_EQ((int)r.act_exps.size(), plan->num_layers + 1);
      EXPECT_EQ(r.act_exps[0], -6);  // pixel / 255
      for (const tvh::LayerQuant& q : r.layers) {
        const tv::LayerType t = plan->desc.layers[q.index].type;
        if (t == tv::LayerType::MaxPool2D || t == tv::LayerType::ReLU || t == tv::LayerType::Clip ||
            t == tv::LayerType::Flatten) {
          EXPECT_EQ(q.e_out, q.e_in) << q.name;
        }
        if (q.has_params) {
          EXPECT_GE(q.shift_min, 0) << q.name;
          EXPECT_LE(q.acc_bound, tv::kS3AccLimit) << q.name;
          EXPECT_LE(q.acc_bound, q.worst_acc) << q.name;  // never looser than the kernels' rule
          EXPECT_LE(q.observed_acc, q.acc_bound) << q.name;
          EXPECT_LE(q.max_abs_bias, tv::kS3AccLimit) << q.name;
          EXPECT_EQ(q.e_w_channels.empty(), !per_channel || t == tv::LayerType::DepthwiseConv2D) << q.name;
        }
      }
      EXPECT_EQ(r.float_weight_bytes, plan->param_count * 4);
      Bound b;
      bind_blob(*plan, r.blob, &b);
      tvh::Dataset other = random_dataset(64, 64, 3, 3, 3, 99);
      for (size_t i = 0; i < other.size(); ++i)
        expect_bit_exact(*plan, b, other.image(i), "image " + std::to_string(i));
      std::vector<uint8_t> white(64 * 64 * 3, 255);
      expect_bit_exact(*plan, b, white.data(), "white");
    }
  }
}

// A class renamed (on the board or the PC) keeps an int8 model's tensors, exponents and flags byte for byte.
TEST(Quantize, RelabelingAnInt8ModelKeepsEveryOtherByte) {
  auto [plan, params] = he_model("tinyvision", 3, 11);
  tvh::QuantOptions o;
  o.per_channel = true;
  const tvh::QuantResult r = quantize(*plan, params, random_dataset(64, 64, 3, 4, 3, 5), o);
  tv::BlobView v;
  ASSERT_TRUE(tv::blob_decode(r.blob.data(), r.blob.size(), &v).ok());
  ASSERT_TRUE(v.is_int8());
  auto encode = [](const tv::BlobView& from, const std::vector<const char*>& labels) {
    const tv::BlobContents c = tv::blob_contents_relabeled(from, labels.data());
    std::vector<uint8_t> out(tv::blob_encoded_size(c));
    EXPECT_TRUE(tv::blob_encode(c, out.data(), out.size(), nullptr).ok());
    return out;
  };
  std::vector<const char*> own;
  std::vector<std::string> names = labels_for(*plan);
  for (const std::string& s : names) own.push_back(s.c_str());
  EXPECT_EQ(encode(v, own), r.blob);
  std::vector<const char*> other = own;
  other[2] = "renamed";
  const std::vector<uint8_t> b = encode(v, other);
  tv::BlobView w;
  ASSERT_TRUE(tv::blob_decode(b.data(), b.size(), &w).ok());
  EXPECT_TRUE(w.is_int8());
  ASSERT_EQ(w.num_tensors, v.num_tensors);
  for (int i = 0; i < v.num_tensors; ++i) {
    EXPECT_EQ(w.tensors[i].bytes, v.tensors[i].bytes);
    EXPECT_EQ(w.tensors[i].exponent, v.tensors[i].exponent);
    EXPECT_EQ(w.tensors[i].exp_count, v.tensors[i].exp_count);
    EXPECT_EQ(0, std::memcmp(w.tensors[i].data, v.tensors[i].data, v.tensors[i].bytes)) << i;
    EXPECT_EQ(0, std::memcmp(w.tensors[i].channel_exps, v.tensors[i].channel_exps, v.tensors[i].exp_count)) << i;
  }
  EXPECT_EQ(std::vector<int8_t>(w.act_exps, w.act_exps + w.num_act_exps), r.act_exps);
  EXPECT_EQ(encode(w, own), r.blob) << "renamed back: the original bytes";
}

TEST(Quantize, CalibratedCheckReportsLayersWithoutTheGuarantee) {
  // The webmcu dense layer has 6,728 inputs: with He-init weights its worst case exceeds 20 bits.
  tv::ModelDesc d;
  tv::webmcu_model(3, &d);
  auto [plan, params] = he_model(d, 4);
  tvh::Dataset ds = random_dataset(64, 64, 3, 4, 3, 8);
  tvh::QuantOptions o;
  o.acc_check = tvh::AccCheck::Calibrated;
  tvh::QuantResult r = quantize(*plan, params, ds, o);
  const tvh::LayerQuant& dense = r.layers[8];
  EXPECT_GT(dense.acc_bound, tv::kS3AccLimit);
  EXPECT_LE(dense.observed_acc, (1 << 18) - 1);
  EXPECT_TRUE(mentions(r.adjustments, "layer 8 (dense)", "NOT GUARANTEED")) << joined(r.adjustments);
  // The default (worst case) guarantees it.
  tvh::QuantResult g = quantize(*plan, params, ds);
  EXPECT_LE(g.layers[8].acc_bound, tv::kS3AccLimit);
  EXPECT_FALSE(mentions(g.adjustments, "layer 8 (dense)", "NOT GUARANTEED"));
}

TEST(Quantize, DeterministicAndPercentileNeverWidensRanges) {
  auto [plan, params] = he_model("tinyvision", 2, 2);
  tvh::Dataset ds = random_dataset(64, 64, 3, 4, 2, 3);
  EXPECT_EQ(quantize(*plan, params, ds).blob, quantize(*plan, params, ds).blob);
  tvh::QuantOptions p, minmax;
  p.observer = tvh::Observer::Percentile;
  p.percentile = 99.0;
  minmax.observer = tvh::Observer::MinMax;
  tvh::CalibrationStats mm = tvh::calibrate(*plan, params.data(), ds, first_n(4), minmax);
  tvh::CalibrationStats pc = tvh::calibrate(*plan, params.data(), ds, first_n(4), p);
  EXPECT_EQ(mm.max_abs, pc.max_abs);
  bool narrower = false;
  for (size_t t = 1; t < pc.range.size(); ++t) {
    EXPECT_LE(pc.range[t], mm.range[t] * (1 + 1e-12)) << t;
    narrower = narrower || pc.range[t] < mm.range[t];
  }
  EXPECT_TRUE(narrower);
  EXPECT_THROW(tvh::calibrate(*plan, params.data(), ds, {}, p), tvh::Error);
}

// The Mse observer against its float twin: the squared error of really rounding and clipping every
// value at each candidate exponent, computed on the values themselves.
TEST(Quantize, MseExponentIsTheRealSmallestError) {
  std::mt19937 rng(5);
  auto exact_error = [](const std::vector<double>& v, int e) {
    const double step = std::ldexp(1.0, e);
    double err = 0;
    for (double x : v) {
      const double q = std::min(std::floor(x / step + 0.5), 127.0) * step;
      err += (x - q) * (x - q);
    }
    return err;
  };
  // Heavy tails (a few large values), Gaussian, uniform, and mostly-small with rare outliers.
  for (int kind = 0; kind < 4; ++kind) {
    SCOPED_TRACE("kind " + std::to_string(kind));
    std::vector<double> v;
    std::exponential_distribution<double> ex(3.0);
    std::normal_distribution<double> nd(0.0, 1.0);
    std::uniform_real_distribution<double> un(0.0, 5.0);
    for (int k = 0; k < 200000; ++k) {
      const double x = kind == 0 ? ex(rng) : kind == 1 ? std::fabs(nd(rng)) : kind == 2 ? un(rng) : 0.05 * ex(rng);
      v.push_back(x);
    }
    if (kind == 3) v.push_back(2.0);  // one outlier sets max|x| 120x above the typical value
    const double m = *std::max_element(v.begin(), v.end());
    std::vector<uint64_t> hist(4096, 0);
    for (double x : v) hist[std::min<size_t>(4095, (size_t)(x / m * 4096))]++;
    const int e_max = tvh::exponent_for_range(m);
    const int chosen = tvh::mse_exponent(hist, m);
    ASSERT_LE(chosen, e_max);
    ASSERT_GE(chosen, e_max - 4);
    double best = 1e300;
    for (int e = e_max - 4; e <= e_max; ++e) best = std::min(best, exact_error(v, e));
    // The histogram's estimate may pick a neighbour of nearly equal error, never a clearly worse one.
    EXPECT_LE(exact_error(v, chosen), best * 1.05) << "chosen " << chosen << " of " << e_max;
    if (kind == 2) {
      EXPECT_EQ(chosen, e_max);  // uniform: nothing to gain by clipping
    }
    if (kind == 3) {
      EXPECT_LE(chosen, e_max - 2);  // clipping the outlier costs less than rounding 200,000 small values
    }
  }
  EXPECT_EQ(tvh::mse_exponent({}, 1.0), tvh::exponent_for_range(1.0));
}

TEST(Quantize, MseObserverNeverWidensAndKeepsTheScores) {
  auto [plan, params] = he_model("tinyvision", 3, 6);
  tvh::Dataset ds = random_dataset(64, 64, 3, 4, 3, 21);
  tvh::QuantOptions minmax;
  minmax.observer = tvh::Observer::MinMax;
  const tvh::CalibrationStats mm = tvh::calibrate(*plan, params.data(), ds, first_n(6), minmax);
  const tvh::CalibrationStats ms = tvh::calibrate(*plan, params.data(), ds, first_n(6), tvh::QuantOptions());
  EXPECT_EQ(mm.max_abs, ms.max_abs);
  const size_t scores = ms.range.size() - 1;  // the dense layer's output
  int narrower = 0;
  for (size_t t = 1; t < scores; ++t) {
    if (mm.range[t] > 0) {
      EXPECT_LE(tvh::exponent_for_range(ms.range[t]), tvh::exponent_for_range(mm.range[t])) << t;
      narrower += tvh::exponent_for_range(ms.range[t]) < tvh::exponent_for_range(mm.range[t]);
    }
  }
  EXPECT_GT(narrower, 0);
  EXPECT_EQ(ms.range[scores], mm.range[scores]);
  // The default writes a model the S3 runs exactly, like min/max does.
  tvh::QuantResult r = quantize(*plan, params, ds);
  for (const tvh::LayerQuant& q : r.layers) {
    if (q.has_params) {
      EXPECT_LE(q.acc_bound, tv::kS3AccLimit) << q.name;
    }
  }
}

TEST(Quantize, UnevenAdaptivePoolIsRefusedByName) {
  tv::ModelDesc d = input_model(10, 10, 1, 2);
  tv::add_layer(&d, tv::conv2d_layer(2, 3));            // 8x8x2
  tv::add_layer(&d, tv::adaptive_avgpool_layer(3, 3));  // 8 -> 3: unequal bins
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto [plan, params] = he_model(d, 1);
  tvh::Dataset ds = random_dataset(10, 10, 1, 3, 2, 1);
  try {
    quantize(*plan, params, ds);
    FAIL() << "expected a refusal";
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 1 (adaptive_avgpool2d)"), std::string::npos) << e.what();
  }
}

TEST(Prune, QuotaRemovesAtLeastTheRatio) {
  EXPECT_EQ(tvh::prune_quota({4, 8}, 0.2), (std::vector<int>{1, 2}));
  std::vector<int> q = tvh::prune_quota({16, 32, 64, 64}, 0.2);
  int sum = 0;
  for (int x : q) sum += x;
  EXPECT_EQ(sum, 36);                              // ceil(0.2 * 176)
  EXPECT_EQ(q, (std::vector<int>{3, 7, 13, 13}));  // floors 3, 6, 12, 12; +1 to the largest remainders .8, .8, .4
  EXPECT_EQ(tvh::prune_quota({3, 5}, 0.0), (std::vector<int>{0, 0}));
  EXPECT_EQ(tvh::prune_quota({1, 2}, 0.9), (std::vector<int>{0, 1}));  // every layer keeps one channel
}

TEST(Prune, RemovingDeadChannelsKeepsTheOutputs) {
  // conv(6) -> relu -> depthwise -> relu -> maxpool -> conv(8, 1x1) -> relu -> flatten -> dense.
  // Channels 1 and 4 of the first conv and 2 and 5 of the second are dead (zero filter and bias, and
  // zero depthwise bias): removing them must not change a single output.
  tv::ModelDesc d = input_model(8, 8, 3, 3);
  tv::add_layer(&d, tv::conv2d_layer(6, 3, 1, tv::Padding::Same));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::depthwise_layer(3));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::maxpool_layer(2));
  tv::add_layer(&d, tv::conv2d_layer(8, 1));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto [plan, params] = he_model(d, 21);
  for (float& p : params) p += 0.01f;  // non-zero biases everywhere
  auto kill = [&](int layer, int ch) {
    const tv::LayerPlan& lp = plan->layers[layer];
    const size_t fan = lp.weight_count / lp.bias_count;
    float* w = params.data() + lp.param_offset;
    for (size_t t = 0; t < fan; ++t) w[(size_t)ch * fan + t] = 0.f;
    w[lp.weight_count + (size_t)ch] = 0.f;
  };
  for (int ch : {1, 4}) {
    kill(0, ch);
    params[plan->layers[2].param_offset + plan->layers[2].weight_count + (size_t)ch] = 0.f;  // depthwise bias
  }
  for (int ch : {2, 5}) kill(5, ch);
  tvh::PruneResult pr = tvh::prune_model(*plan, params.data(), 4.0 / 14.0);
  ASSERT_EQ(pr.layers.size(), 2u);
  EXPECT_EQ(pr.layers[0].removed, (std::vector<int>{1, 4}));
  EXPECT_EQ(pr.layers[1].removed, (std::vector<int>{2, 5}));
  EXPECT_EQ(pr.channels_before, 14);
  EXPECT_EQ(pr.channels_after, 10);
  auto small = plan_of(pr.desc);
  EXPECT_EQ(small->layers[2].out.c, 4);  // the depthwise layer follows
  EXPECT_EQ(small->layers[8].in.size(), 4u * 4u * 6u);
  tvh::AlignedBuffer a1(tv::inference_memory(*plan).work_bytes), a2(tv::inference_memory(*small).work_bytes);
  tv::Inference i1, i2;
  ASSERT_TRUE(tv::inference_init(&i1, plan.get(), params.data(), a1.data(), a1.size()).ok());
  ASSERT_TRUE(tv::inference_init(&i2, small.get(), pr.params.data(), a2.data(), a2.size()).ok());
  tvh::Dataset ds = random_dataset(8, 8, 3, 5, 3, 4);
  for (size_t n = 0; n < ds.size(); ++n) {
    float p1[3], p2[3], l1[3], l2[3];
    tv::infer_u8(i1, ds.image(n), p1, l1);
    tv::infer_u8(i2, ds.image(n), p2, l2);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(l1[k], l2[k], 1e-5f * (1.f + std::fabs(l1[k]))) << n << " " << k;
  }
}

TEST(Prune, FlattenFollowsHwcOrderAndGlobalPoolFollowsChannels) {
  // 2x3x1 -> conv(4, 1x1) -> flatten -> dense(2): dense column (y * 3 + x) * 4 + c.
  tv::ModelDesc d = input_model(2, 3, 1, 2);
  tv::add_layer(&d, tv::conv2d_layer(4, 1));
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto plan = plan_of(d);
  std::vector<float> params(plan->param_count);
  for (size_t i = 0; i < params.size(); ++i) params[i] = 0.001f * (float)(i + 1);
  float* cw = params.data() + plan->layers[0].param_offset;
  cw[2] = 1e-6f;  // channel 2 has the smallest L1 norm
  tvh::PruneResult pr = tvh::prune_model(*plan, params.data(), 0.25);
  ASSERT_EQ(pr.layers[0].kept, (std::vector<int>{0, 1, 3}));
  auto small = plan_of(pr.desc);
  const float* ow = params.data() + plan->layers[2].param_offset;
  const float* nw = pr.params.data() + small->layers[2].param_offset;
  for (int o = 0; o < 2; ++o)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x)
        for (int c = 0; c < 3; ++c)
          EXPECT_EQ(nw[o * 18 + (y * 3 + x) * 3 + c], ow[o * 24 + (y * 3 + x) * 4 + pr.layers[0].kept[(size_t)c]]);
  // Through a global pool the dense columns are channels.
  tv::ModelDesc g = input_model(4, 4, 3, 2);
  tv::add_layer(&g, tv::conv2d_layer(5, 3));
  tv::add_layer(&g, tv::relu_layer());
  tv::add_layer(&g, tv::global_avgpool_layer());
  tv::add_layer(&g, tv::dense_layer());
  auto [gp, gparams] = he_model(g, 6);
  tvh::PruneResult gr = tvh::prune_model(*gp, gparams.data(), 0.4);
  auto gs = plan_of(gr.desc);
  EXPECT_EQ(gs->layers[3].in.size(), 3u);
  const float* gw = gparams.data() + gp->layers[3].param_offset;
  const float* gn = gr.params.data() + gs->layers[3].param_offset;
  for (int o = 0; o < 2; ++o)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(gn[o * 3 + c], gw[o * 5 + gr.layers[0].kept[(size_t)c]]);
  // The last layer's classes are never pruned; a model without a prunable conv is refused.
  tv::ModelDesc only = input_model(4, 4, 1, 2);
  tv::add_layer(&only, tv::flatten_layer());
  tv::add_layer(&only, tv::dense_layer());
  auto op = plan_of(only);
  std::vector<float> oparams(op->param_count, 0.1f);
  EXPECT_THROW(tvh::prune_model(*op, oparams.data(), 0.2), tvh::Error);
  EXPECT_THROW(tvh::prune_model(*gp, gparams.data(), 1.0), tvh::Error);
}
