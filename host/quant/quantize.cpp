#include "host/quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "host/base/error.h"
#include "host/base/parallel.h"
#include "host/base/text.h"
#include "host/base/text_width.h"
#include "host/model/model_io.h"
#include "host/model/s3_limits.h"
#include "host/quant/q8_reference.h"
#include "tv/detect/grid.h"
#include "tv/int8/int8_ops.h"
#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/train/net.h"

namespace tvh {

namespace {

constexpr int64_t kCalibratedAccLimit = (int64_t(1) << 18) - 1;  // one bit of margin
// A detector's exponents are scored on at most this many calibration images (each candidate runs over them).
constexpr size_t kDetectorSearchImages = 256;

bool keeps_exponent(tv::LayerType t) {
  return tv::layer_info(t).int8 == tv::Int8Exponent::KeepsInput;
}

std::string layer_label(const tv::ModelPlan& plan, int i) {
  return "layer " + std::to_string(i) + " (" + tv::layer_type_name(plan.desc.layers[i].type) + ")";
}

// round half up of b * 2^-e, saturated far outside the 20-bit range (so the caller sees "too big").
int64_t quantize_bias(float b, int e) {
  double v = std::floor(std::ldexp((double)b, -e) + 0.5);
  const double cap = 1099511627776.0;  // 2^40
  if (!(v == v)) return 0;
  if (v > cap) return (int64_t)cap;
  if (v < -cap) return -(int64_t)cap;
  return (int64_t)v;
}

void check_exponent(const tv::ModelPlan& plan, int layer, int e, const char* what) {
  if (e < -100 || e > 100)
    throw Error(layer_label(plan, layer) + ": the " + std::string(what) + " exponent " + std::to_string(e) +
                " is outside the range the int8 blob holds (the model's values are too extreme to quantize).");
}

// One conv / depthwise / dense layer's weights viewed as n_out filters of `taps` weights each.
struct Filters {
  const float* w;
  const float* b;
  int n_out, taps;
  bool depthwise;
  size_t at(int o, int t) const { return depthwise ? (size_t)t * n_out + o : (size_t)o * taps + t; }
};

// The int8 values a tensor can hold on ANY input image: the bound the accumulation rule is checked
// against.
using Interval = Int8Interval;

// Quantizes filters [o0, o1) at weight exponent e_w with bias exponent e_in + e_w and reports, over
// those outputs: the largest |running sum| any input in `in` can produce (tvh::filter_sums), the
// largest |q_b|, whether every bias fits 20 bits, and the extreme accumulator values (for the output
// interval).
struct GroupCheck {
  int64_t bound = 0, max_bias = 0;
  int64_t acc_lo = 0, acc_hi = 0;
  bool bias_fits = true;
};
GroupCheck check_group(const Filters& f, int o0, int o1, int e_in, int e_w, const Interval& in, int8_t* qw,
                       int32_t* qb) {
  GroupCheck c;
  for (int o = o0; o < o1; ++o) {
    const int64_t b = quantize_bias(f.b[o], e_in + e_w);
    const FilterSums s = filter_sums(
        b, f.taps,
        [&](int t) {
          const int8_t q = tv::quantize_one_s8(f.w[f.at(o, t)], e_w);
          if (qw) qw[f.at(o, t)] = q;
          return q;
        },
        in);
    if (b < kS3BiasMin || b > kS3BiasMax) c.bias_fits = false;
    if (qb) qb[o] = (int32_t)std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, b));
    c.max_bias = std::max(c.max_bias, std::abs(b));
    c.bound = std::max(c.bound, s.bound);
    c.acc_lo = o == o0 ? s.end_lo : std::min(c.acc_lo, s.end_lo);
    c.acc_hi = o == o0 ? s.end_hi : std::max(c.acc_hi, s.end_hi);
  }
  return c;
}

float max_abs_of(const Filters& f, int o0, int o1) {
  float m = 0.f;
  for (int o = o0; o < o1; ++o)
    for (int t = 0; t < f.taps; ++t) m = std::max(m, std::fabs(f.w[f.at(o, t)]));
  return m;
}

struct GroupFit {
  int initial = 0;     // from max|w|
  int after_bias = 0;  // after the 20-bit bias rule
  int after_acc = 0;   // after the accumulation rule
  int final_e = 0;     // after `extra`
  GroupCheck first, mid, last;
};

// Chooses the weight exponent of filters [o0, o1) (initially from max|w|) and raises it until the
// biases fit 20 bits and (worst_rule) the accumulation bound fits the S3's lanes; `extra` raises it
// further (the calibrated check). Writes the int8 weights and int32 biases.
GroupFit fit_group(const Filters& f, int o0, int o1, int e_in, int e_zero, const Interval& in, bool worst_rule,
                   int extra, int8_t* qw, int32_t* qb) {
  GroupFit g;
  const float m = max_abs_of(f, o0, o1);
  // All-zero weights: any exponent is exact; e_zero gives shift 0.
  int e = m > 0.f ? exponent_for_range(m) : e_zero;
  g.initial = e;
  GroupCheck c = check_group(f, o0, o1, e_in, e, in, nullptr, nullptr);
  g.first = c;
  while (!c.bias_fits && e < 100) c = check_group(f, o0, o1, e_in, ++e, in, nullptr, nullptr);
  g.after_bias = e;
  g.mid = c;
  if (worst_rule)
    while (c.bound > tv::kS3AccLimit && e < 100) c = check_group(f, o0, o1, e_in, ++e, in, nullptr, nullptr);
  g.after_acc = e;
  e += extra;
  g.final_e = e;
  g.last = check_group(f, o0, o1, e_in, e, in, qw, qb);
  return g;
}

}  // namespace

namespace {

// Everything chosen for every layer, before the blob is assembled.
struct QuantChoices {
  std::vector<LayerQuant> layers;
  std::vector<int> act;
  std::vector<std::vector<int8_t>> qweights, wexps, bexps;
  std::vector<std::vector<int32_t>> qbiases;
  std::vector<int> acc_raise;  // per layer: how far the accumulation rule raised the weight exponent
  std::vector<int> producer;   // per param layer: the LeakyReLU / average pool whose output it reads, or -1
};

// A table or an average: its reachable output shrinks as its own exponent grows.
bool bounded_producer(tv::LayerType t) {
  return tv::layer_info(t).int8 == tv::Int8Exponent::OwnRange;
}

// The layer whose own output exponent sets layer i's input (through exponent-keeping layers), when it
// is one whose reachable output shrinks as its exponent grows (a table or an average); else -1.
int producer_of(const tv::ModelPlan& plan, int i) {
  int j = i - 1;
  while (j >= 0 && keeps_exponent(plan.desc.layers[j].type)) --j;
  return j >= 0 && bounded_producer(plan.desc.layers[j].type) ? j : -1;
}

// The input's exponent: pixel * scale + offset for pixel in [0, 255], whatever the images are.
int input_exponent(const tv::ModelPlan& plan) {
  const float in0 = 0.f * plan.desc.input.scale + plan.desc.input.offset;
  const float in255 = 255.f * plan.desc.input.scale + plan.desc.input.offset;
  const double input_max = std::max(std::fabs((double)in0), std::fabs((double)in255));
  return input_max > 0 ? exponent_for_range(input_max) : 0;
}

// Refuses an adaptive average pool whose bins are not equal: ESP-DL has no int8 equivalent.
void check_equal_bins(const tv::ModelPlan& plan, int i, const std::string& who) {
  const tv::LayerPlan& lp = plan.layers[i];
  if (plan.desc.layers[i].type == tv::LayerType::AdaptiveAvgPool2D && !tv::equal_bins(lp))
    throw Error(who + ": an adaptive average pool with unequal bins (" + std::to_string(lp.in.h) + "x" +
                std::to_string(lp.in.w) + " to " + std::to_string(lp.out.h) + "x" + std::to_string(lp.out.w) +
                ") has no int8 equivalent in ESP-DL; use a size that divides evenly.");
}

// LeakyReLU and the average pools: their own exponent from their (fused) output's range.
void choose_own_range(const tv::ModelPlan& plan, int i, const CalibrationStats& stats, int extra_act,
                      const std::string& who, LayerQuant& q) {
  const double range = stats.range[(size_t)calibrated_tensor(plan, i)];
  q.calib_range = range;
  q.e_out = q.e_out_initial = range > 0 ? exponent_for_range(range) : q.e_in;
  if (!(range > 0))
    q.adjustments.push_back(who +
                            ": no calibration image gave a non-zero output, so the output keeps the input's exponent " +
                            std::to_string(q.e_in) + ".");
  if (extra_act > 0) q.e_out += extra_act;  // the sentence is written by the caller
}

// A layer's weights as filters, refused when one is not a finite number.
Filters finite_filters(const tv::ModelPlan& plan, int i, const float* params, const std::string& who) {
  const tv::LayerPlan& lp = plan.layers[i];
  const float* w = params + lp.param_offset;
  for (size_t k = 0; k < lp.weight_count + lp.bias_count; ++k)
    if (!std::isfinite(w[k]))
      throw Error(who + ": a weight or bias is not a finite number (the float model is broken; retrain it).");
  return Filters{w, w + lp.weight_count, (int)lp.bias_count, (int)(lp.weight_count / lp.bias_count),
                 plan.desc.layers[i].type == tv::LayerType::DepthwiseConv2D};
}

// What the groups' exponent fits add up to.
struct FitSummary {
  std::vector<int> ew;  // each group's final weight exponent
  int64_t mid_bound = 0, first_bias = 0, raised_bias = 0, raised_acc = 0;
  int e_first_max = -1000, e_bias_max = -1000, e_acc_max = -1000;
  int acc_raise = 0;  // how far the accumulation rule raised a weight exponent
  int e_w_max() const { return *std::max_element(ew.begin(), ew.end()); }
  int e_w_min() const { return *std::min_element(ew.begin(), ew.end()); }
};

FitSummary summarize(const std::vector<GroupFit>& fits) {
  FitSummary s;
  for (const GroupFit& g : fits) {
    s.ew.push_back(g.final_e);
    if (g.after_acc > g.after_bias) s.mid_bound = std::max(s.mid_bound, g.mid.bound);
    s.first_bias = std::max(s.first_bias, g.first.max_bias);
    s.e_first_max = std::max(s.e_first_max, g.initial);
    s.e_bias_max = std::max(s.e_bias_max, g.after_bias);
    s.e_acc_max = std::max(s.e_acc_max, g.after_acc);
    s.raised_bias += g.after_bias > g.initial;
    s.raised_acc += g.after_acc > g.after_bias;
    s.acc_raise = std::max(s.acc_raise, g.after_acc - g.after_bias);
  }
  return s;
}

// The sentences saying why the weight exponent was raised (bias range, accumulator, calibrated check).
void explain_weight_raises(const FitSummary& s, bool per_channel, int groups, const Interval& iv, int extra_w,
                           const std::string& who, LayerQuant& q) {
  std::string scope =
      per_channel ? std::to_string(s.raised_bias) + " of " + std::to_string(groups) + " channels'" : "the";
  if (s.raised_bias) {
    q.adjustments.push_back(who + ": a bias needs " + grouped(s.first_bias) +
                            " steps at exponent e_in + e_w = " + std::to_string(q.e_in + s.e_first_max) +
                            ", outside the ESP32-S3's 20-bit bias range [-2^19, 2^19 - 1]; " + scope +
                            " weight exponent was raised from " + std::to_string(s.e_first_max) + " to " +
                            std::to_string(s.e_bias_max) + ".");
  }
  if (s.raised_acc) {
    scope = per_channel ? std::to_string(s.raised_acc) + " of " + std::to_string(groups) + " channels'" : "the";
    q.adjustments.push_back(who + ": with inputs in [" + std::to_string(iv.lo) + ", " + std::to_string(iv.hi) +
                            "] its accumulation can reach " + grouped(s.mid_bound) +
                            ", beyond the ESP32-S3's 20-bit accumulator (limit " + grouped(tv::kS3AccLimit) +
                            "), at weight exponent " + std::to_string(s.e_bias_max) + "; " + scope +
                            " weight exponent was raised to " + std::to_string(s.e_acc_max) + ".");
  }
  if (extra_w > 0) {
    q.adjustments.push_back(who + ": on the calibration images a running sum came within one bit of the ESP32-S3's " +
                            "20-bit accumulator; the weight exponent was raised by " + std::to_string(extra_w) +
                            " to " + std::to_string(s.e_w_max()) + ".");
  }
}

// The output exponent of a layer with weights: from calibration, e_in + e_w for a dead output, and
// never below e_in + e_w (ESP-DL needs a shift >= 0). Sets q.e_out_initial and q.e_out.
void settle_output_exponent(int e_out, bool dead, int e_w_max, const std::string& who, LayerQuant& q) {
  if (dead) {
    e_out = q.e_in + e_w_max;
    q.adjustments.push_back(who +
                            ": no calibration image gave a non-zero output, so the output exponent is e_in + e_w = " +
                            std::to_string(e_out) + " (shift 0).");
  }
  q.e_out_initial = e_out;
  if (e_out - q.e_in - e_w_max < 0) {
    const int s = e_out - q.e_in - e_w_max;
    e_out = q.e_in + e_w_max;
    q.adjustments.push_back(who + ": the requantization shift e_out - e_in - e_w would be " + std::to_string(s) +
                            " (e_out " + std::to_string(q.e_out_initial) + " from calibration, e_in " +
                            std::to_string(q.e_in) + ", e_w " + std::to_string(e_w_max) +
                            "), and ESP-DL needs it >= 0; the output exponent was raised to " + std::to_string(e_out) +
                            ".");
  }
  q.e_out = e_out;
}

// The reachable accumulator bound (the guarantee), the kernels' any-int8-input figure and the largest
// bias; returns the values the layer's int8 output can take.
Interval record_bounds(const Filters& f, const std::vector<GroupFit>& fits, const int8_t* qw, const int32_t* qb,
                       LayerQuant& q) {
  Interval out{127, -128};
  for (size_t g = 0; g < fits.size(); ++g) {
    q.acc_bound = std::max(q.acc_bound, fits[g].last.bound);
    const int sh = q.e_out - q.e_in - fits[g].final_e;
    out.lo = std::min<int64_t>(out.lo, tv::requantize_s8(fits[g].last.acc_lo, sh));
    out.hi = std::max<int64_t>(out.hi, tv::requantize_s8(fits[g].last.acc_hi, sh));
  }
  q.bound_headroom_bits = tv::headroom_bits_s8(q.acc_bound);
  tv::AccHeadroom h = f.depthwise ? tv::acc_headroom_depthwise_s8(f.taps, f.n_out, qw, qb)
                                  : tv::acc_headroom_s8(f.n_out, f.taps, qw, qb);
  q.worst_acc = h.worst;
  q.headroom_bits = h.headroom_bits;
  for (int o = 0; o < f.n_out; ++o) q.max_abs_bias = std::max<int64_t>(q.max_abs_bias, std::abs(qb[o]));
  return out;
}

// A conv / depthwise / dense layer: its weight exponent(s) per group, int8 weights and biases, and its
// output exponent; iv becomes the values its output can take.
void choose_weighted(const tv::ModelPlan& plan, int i, const float* params, const CalibrationStats& stats,
                     const QuantOptions& options, int extra_w, const std::string& who, Interval& iv, LayerQuant& q,
                     QuantChoices& c) {
  const tv::LayerDesc& d = plan.desc.layers[i];
  const tv::LayerPlan& lp = plan.layers[i];
  q.has_params = true;
  c.producer[(size_t)i] = producer_of(plan, i);
  const double range = stats.range[(size_t)calibrated_tensor(plan, i)];
  q.calib_range = range;
  const bool dead = !(range > 0);
  const int e_out = dead ? 0 : exponent_for_range(range);
  const Filters f = finite_filters(plan, i, params, who);
  c.qweights[(size_t)i].assign(lp.weight_count, 0);
  c.qbiases[(size_t)i].assign(lp.bias_count, 0);
  int8_t* qw = c.qweights[(size_t)i].data();
  int32_t* qb = c.qbiases[(size_t)i].data();
  const bool per_channel = options.per_channel && d.type != tv::LayerType::DepthwiseConv2D;
  const int groups = per_channel ? f.n_out : 1;
  std::vector<GroupFit> fits;
  for (int g = 0; g < groups; ++g) {
    const int o0 = per_channel ? g : 0, o1 = per_channel ? g + 1 : f.n_out;
    fits.push_back(fit_group(f, o0, o1, q.e_in, dead ? 0 : e_out - q.e_in, iv, options.acc_check == AccCheck::WorstCase,
                             extra_w, qw, qb));
  }
  const FitSummary s = summarize(fits);
  c.acc_raise[(size_t)i] = std::max(c.acc_raise[(size_t)i], s.acc_raise);
  q.e_w_initial = s.e_first_max;
  explain_weight_raises(s, per_channel, groups, iv, extra_w, who, q);
  settle_output_exponent(e_out, dead, s.e_w_max(), who, q);
  if (per_channel) {
    q.e_w_channels = s.ew;
    q.e_w = s.e_w_max();
  } else {
    q.e_w = s.ew[0];
  }
  q.shift_min = q.e_out - q.e_in - s.e_w_max();
  q.shift_max = q.e_out - q.e_in - s.e_w_min();
  for (int e : s.ew) check_exponent(plan, i, e, "weight");
  check_exponent(plan, i, q.e_in + s.e_w_max(), "bias");
  iv = record_bounds(f, fits, qw, qb, q);
  if (per_channel) {
    for (int e : s.ew) {
      c.wexps[(size_t)i].push_back((int8_t)e);
      c.bexps[(size_t)i].push_back((int8_t)(q.e_in + e));
    }
  }
}

QuantChoices choose(const tv::ModelPlan& plan, const float* params, const CalibrationStats& stats,
                    const QuantOptions& options, const std::vector<int>& extra_w, const std::vector<int>& extra_act) {
  const int L = plan.num_layers;
  QuantChoices c;
  c.act.assign((size_t)L + 1, 0);
  c.qweights.resize((size_t)L);
  c.qbiases.resize((size_t)L);
  c.wexps.resize((size_t)L);
  c.bexps.resize((size_t)L);
  c.acc_raise.assign((size_t)L, 0);
  c.producer.assign((size_t)L, -1);
  c.act[0] = input_exponent(plan);
  check_exponent(plan, 0, c.act[0], "input");
  Interval iv = input_interval(plan.desc.input, c.act[0]);  // the values the current tensor can hold

  for (int i = 0; i < L; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    LayerQuant q;
    q.index = i;
    q.type = tv::layer_type_name(d.type);
    q.name = "l" + std::to_string(i) + "_" + q.type;
    q.e_in = c.act[(size_t)i];
    q.in_lo = iv.lo;
    q.in_hi = iv.hi;
    const std::string who = layer_label(plan, i);
    check_equal_bins(plan, i, who);
    switch (tv::layer_info(d.type).int8) {
      case tv::Int8Exponent::KeepsInput:
        q.e_out = q.e_out_initial = q.e_in;
        iv = parameterless_interval(d, q.e_in, q.e_out, iv);
        break;
      case tv::Int8Exponent::OwnRange:
        choose_own_range(plan, i, stats, extra_act[(size_t)i], who, q);
        iv = parameterless_interval(d, q.e_in, q.e_out, iv);
        break;
      case tv::Int8Exponent::WithWeights:
        choose_weighted(plan, i, params, stats, options, extra_w[(size_t)i], who, iv, q, c);
        break;
    }
    check_exponent(plan, i, q.e_out, "output");
    q.out_lo = iv.lo;
    q.out_hi = iv.hi;
    c.act[(size_t)i + 1] = q.e_out;
    c.layers.push_back(q);
  }
  return c;
}

std::vector<uint8_t> assemble(const tv::ModelPlan& plan, const float* params, const QuantChoices& c,
                              const std::vector<std::string>& labels, const std::string& provenance,
                              std::vector<int8_t>* act_exps) {
  const int L = plan.num_layers;
  act_exps->assign((size_t)L + 1, 0);
  for (int i = 0; i <= L; ++i) (*act_exps)[(size_t)i] = (int8_t)c.act[(size_t)i];
  // The float tensors' names and shapes, with int8 weights and int32 biases.
  std::vector<tv::BlobTensor> tensors(tv::kMaxBlobTensors);
  const int nt = tv::float_tensors(plan, params, tensors.data());
  for (int t = 0; t < nt; ++t) {
    tv::BlobTensor& x = tensors[(size_t)t];
    const LayerQuant& q = c.layers[x.layer];
    const size_t li = x.layer;
    if (x.role == tv::TensorRole::Weight) {
      x.dtype = tv::DType::I8;
      x.data = c.qweights[li].data();
      x.bytes = (uint32_t)c.qweights[li].size();
      x.exponent = (int8_t)q.e_w;
      if (!c.wexps[li].empty()) {
        x.exp_count = (uint16_t)c.wexps[li].size();
        x.channel_exps = c.wexps[li].data();
      }
    } else {
      x.dtype = tv::DType::I32;
      x.data = c.qbiases[li].data();
      x.bytes = (uint32_t)(c.qbiases[li].size() * sizeof(int32_t));
      x.exponent = (int8_t)(q.e_in + q.e_w);
      if (!c.bexps[li].empty()) {
        x.exp_count = (uint16_t)c.bexps[li].size();
        x.channel_exps = c.bexps[li].data();
      }
    }
  }
  std::vector<uint8_t> blob = encode_blob(plan, labels, provenance, tensors.data(), nt, *act_exps);
  // Self-check: the int8 engine must accept what was written.
  auto view = std::make_unique<tv::BlobView>();
  tv::Status st = tv::blob_decode(blob.data(), blob.size(), view.get());
  if (!st.ok()) throw Error("the int8 model just written does not decode: " + status_message(st) + ".");
  auto q8 = std::make_unique<tv::Q8Model>();
  st = tv::q8_bind(*view, plan, q8.get());
  if (!st.ok()) throw Error("the int8 model cannot run: " + status_message(st, &plan.desc) + ".");
  return blob;
}

// Runs the int8 model (the reference interpreter) over the images and returns per layer the largest
// accumulator magnitudes reached (per worker, then the largest of the workers': the same for any count).
std::vector<AccObserved> observe(const tv::ModelPlan& plan, const std::vector<uint8_t>& blob, const ImageSet& ds,
                                 const std::vector<int>& idx, int threads) {
  auto view = std::make_unique<tv::BlobView>();
  tv::blob_decode(blob.data(), blob.size(), view.get());
  const Q8Reference ref = q8_reference_load(*view, plan);
  std::vector<std::vector<AccObserved>> per((size_t)run_workers(idx.size(), threads),
                                            std::vector<AccObserved>((size_t)plan.num_layers));
  for_each_run(idx.size(), threads, [&](int w, size_t from, size_t to) {
    for (size_t j = from; j < to; ++j) {
      std::vector<int8_t> in = q8_reference_input(plan, ref.act_exps[0], ds.image((size_t)idx[j]));
      q8_reference_run(ref, in.data(), 0, &per[(size_t)w]);
    }
  });
  std::vector<AccObserved> obs((size_t)plan.num_layers);
  for (const auto& p : per)
    for (size_t i = 0; i < obs.size(); ++i) {
      obs[i].max_final = std::max(obs[i].max_final, p[i].max_final);
      obs[i].max_partial = std::max(obs[i].max_partial, p[i].max_partial);
    }
  return obs;
}

// How well an int8 model reproduces the float model on some images: the rows (a classifier's one per
// image, a detector's one per grid cell) that decide as the float model's do, then the squared error.
struct Score {
  long agree = -1;
  double sq_error = 0;
  bool better_than(const Score& o) const { return agree != o.agree ? agree > o.agree : sq_error < o.sq_error; }
};

// The float model's outputs on some images, and how well an int8 candidate reproduces them. Both run on
// `threads` threads; each image's figures are kept apart and added in image order, so the score (and
// the choice it makes) is the same for any thread count. The outputs are rows of num_classes values
// (tv::plan_outputs: one row for a classifier, one per grid cell for a detector). A classifier's row decides
// its top class (the logits' argmax), with the logits' squared error; a detector's cell decides its object
// class at the model's threshold or background (tv::grid_cell_class, the objects' rule), with the
// probabilities' squared error.
class Fidelity {
 public:
  Fidelity() = default;
  Fidelity(const tv::ModelPlan& plan, const float* params, const ImageSet& ds, const std::vector<int>& idx, int threads)
      : ds_(&ds),
        idx_(idx),
        threads_(threads),
        outputs_(tv::plan_outputs(plan)),
        detector_(plan.desc.task == tv::Task::Detect) {
    values_.assign(idx.size() * outputs_, 0.f);
    for_each_run(idx.size(), threads, [&](int, size_t from, size_t to) {
      AlignedBuffer arena(tv::inference_memory(plan).work_bytes);
      tv::Inference inf;
      tv::inference_init(&inf, &plan, params, arena.data(), arena.size());
      std::vector<float> buffer(outputs_);
      for (size_t n = from; n < to; ++n) {
        float* v = values_.data() + n * outputs_;
        const tv::Status st = detector_ ? tv::infer_u8(inf, ds.image((size_t)idx[n]), v)
                                        : tv::infer_u8(inf, ds.image((size_t)idx[n]), buffer.data(), v);
        if (!st.ok()) throw_if_not_runnable(st, plan, ds.name((size_t)idx[n]));
      }
    });
  }
  Score score(const tv::ModelPlan& plan, const float* params, const QuantChoices& c,
              const std::vector<std::string>& labels) const {
    std::vector<int8_t> act;
    // The candidate as every tool sees a model: decoded, bound, run by the loaded model's one path.
    const LoadedModel candidate =
        decode_model(assemble(plan, params, c, labels, "", &act), "a candidate int8 model", Tasks::Any);
    const size_t k = plan.desc.num_classes, rows = outputs_ / k;
    const int e = act.back();
    const float threshold = plan.desc.detect_threshold;
    std::vector<double> sq(idx_.size() * outputs_, 0.0);  // each image and output apart
    std::vector<long> agree(idx_.size(), 0);
    for_each_run(idx_.size(), threads_, [&](int, size_t from, size_t to) {
      ModelRunner runner(candidate);
      std::vector<int8_t> out(outputs_);
      std::vector<float> probs(outputs_);
      for (size_t n = from; n < to; ++n) {
        runner.run(ds_->image((size_t)idx_[n]), probs.data(), out.data());
        const float* f = values_.data() + n * outputs_;
        for (size_t r = 0; r < rows; ++r) {
          const size_t at = r * k;
          if (detector_) {
            agree[n] += tv::grid_cell_class(probs.data() + at, (int)k, threshold) ==
                        tv::grid_cell_class(f + at, (int)k, threshold);
            for (size_t j = 0; j < k; ++j) {
              const double d = (double)probs[at + j] - f[at + j];
              sq[n * outputs_ + at + j] = d * d;
            }
            continue;
          }
          size_t qa = 0, fa = 0;
          for (size_t j = 0; j < k; ++j) {
            const double d = std::ldexp((double)out[at + j], e) - f[at + j];
            sq[n * outputs_ + at + j] = d * d;
            if (out[at + j] > out[at + qa]) qa = j;
            if (f[at + j] > f[at + fa]) fa = j;
          }
          agree[n] += qa == fa;
        }
      }
    });
    Score s;
    s.agree = 0;
    for (double d2 : sq) s.sq_error += d2;  // in image and output order: the same sum for any thread count
    for (long a : agree) s.agree += a;
    return s;
  }

 private:
  const ImageSet* ds_ = nullptr;
  std::vector<int> idx_;
  int threads_ = 1;
  size_t outputs_ = 0;
  bool detector_ = false;
  std::vector<float> values_;  // the float model's logits (a classifier) or probabilities (a detector)
};

// The tensor (CalibrationStats index) of the scores: the last conv / dense layer's output after its fused
// activation; L + 1 when there is none.
int scores_tensor(const tv::ModelPlan& plan) {
  for (int i = plan.num_layers - 1; i >= 0; --i)
    if (tv::layer_info(plan.desc.layers[i].type).int8 == tv::Int8Exponent::WithWeights)
      return calibrated_tensor(plan, i);
  return plan.num_layers + 1;
}

}  // namespace

QuantResult quantize_model(const tv::ModelPlan& plan, const float* params, const CalibrationStats& stats,
                           const std::vector<std::string>& labels, const std::string& provenance,
                           const QuantOptions& options, const ImageSet* images, const std::vector<int>* idx) {
  const int L = plan.num_layers;
  if ((int)stats.range.size() != L + 1) throw Error("the calibration statistics do not fit the model.");
  if ((int)labels.size() != plan.desc.num_classes)
    throw Error("the model has " + std::to_string(plan.desc.num_classes) + " classes but " +
                std::to_string(labels.size()) + " labels were given.");
  const bool have_images = images && idx && !idx->empty();
  if (options.acc_check == AccCheck::Calibrated && !have_images)
    throw Error("the calibrated accumulator check needs the calibration images.");
  QuantResult r;
  std::vector<int> extra_w((size_t)L, 0), extra_act((size_t)L, 0);
  QuantChoices c = choose(plan, params, stats, options, extra_w, extra_act);
  // Worst-case rule: a layer that needs coarser weights and reads a table or an average (whose
  // reachable int8 values shrink when its exponent grows) can instead take some of those bits on that
  // input. Every split a = 0 .. need (a bits on the input, the rest on the weights) is guaranteed; the
  // one whose int8 model best reproduces the float model on the calibration images is kept (most
  // top-1 agreements, then the smallest squared error of the outputs). Without images: need / 2.
  std::vector<std::string> act_notes((size_t)L);
  if (options.acc_check == AccCheck::WorstCase) {
    std::unique_ptr<Fidelity> fid;  // the float model's outputs, computed when first needed
    for (int i = 0; i < L; ++i) {
      const int p = c.producer[(size_t)i], need = c.acc_raise[(size_t)i];
      if (p < 0 || need < 1 || extra_act[(size_t)p] > 0) continue;
      int best_a = have_images ? 0 : need / 2;
      QuantChoices best = c;
      if (have_images) {
        if (!fid) fid = std::make_unique<Fidelity>(plan, params, *images, *idx, options.threads);
        Score best_score = fid->score(plan, params, c, labels);
        for (int a = 1; a <= need; ++a) {
          std::vector<int> trial = extra_act;
          trial[(size_t)p] = a;
          QuantChoices t = choose(plan, params, stats, options, extra_w, trial);
          Score sc = fid->score(plan, params, t, labels);
          if (sc.better_than(best_score)) {
            best_score = sc;
            best_a = a;
            best = std::move(t);
          }
        }
      } else if (best_a > 0) {
        std::vector<int> trial = extra_act;
        trial[(size_t)p] = best_a;
        best = choose(plan, params, stats, options, extra_w, trial);
      }
      if (best_a == 0) continue;
      extra_act[(size_t)p] = best_a;
      act_notes[(size_t)p] =
          layer_label(plan, p) + ": its output exponent was raised from " +
          std::to_string(best.layers[(size_t)p].e_out - best_a) + " to " +
          std::to_string(best.layers[(size_t)p].e_out) + " to shrink the inputs of " + layer_label(plan, i) +
          ", whose weights then needed " + std::to_string(best.acc_raise[(size_t)i]) + " coarser bit(s) instead of " +
          std::to_string(need) + " to fit the ESP32-S3's 20-bit accumulator" +
          (have_images ? " (the split that best matches the float model on the calibration images)." : ".");
      c = std::move(best);
    }
  }
  // A detector: what its int8 model must reproduce is which cells pass the threshold, and the exponents the
  // observers choose (a classifier's rules) need not serve that best. The grid's logits keep max|x|, which
  // spends the int8 steps on confident background logits far from any decision: of that exponent and the four
  // below it, the one whose int8 grid decodes (tv::grid_cell_class) the same class as the float model in the
  // most cells of the calibration images is kept, then the smallest squared error of the probabilities. Then
  // every other layer's output exponent, in order, one finer or one coarser when that scores better.
  CalibrationStats used = stats;
  const int scores = scores_tensor(plan);
  if (plan.desc.task == tv::Task::Detect && have_images && scores <= L) {
    // About 25 candidates, each run over the images: at most kDetectorSearchImages of them, evenly spaced.
    std::vector<int> search = *idx;
    if (search.size() > kDetectorSearchImages) {
      search.resize(kDetectorSearchImages);
      for (size_t k = 0; k < kDetectorSearchImages; ++k) search[k] = (*idx)[k * idx->size() / kDetectorSearchImages];
    }
    const Fidelity fid(plan, params, *images, search, options.threads);
    Score best = fid.score(plan, params, c, labels);
    const std::vector<int> before = c.act;
    const size_t cells = search.size() * (tv::plan_outputs(plan) / (size_t)plan.desc.num_classes);
    // Tensor t's range times 2^d (from `from`): kept when it gives t the exponent `expected` and the int8
    // model then scores better.
    const auto attempt = [&](const CalibrationStats& from, int t, int d, int expected) {
      CalibrationStats trial = from;
      trial.range[(size_t)t] = std::ldexp(from.range[(size_t)t], d);
      QuantChoices tc = choose(plan, params, trial, options, extra_w, extra_act);
      if (tc.act[(size_t)t] != expected) return false;  // a rule kept the exponent: nothing new to try
      const Score sc = fid.score(plan, params, tc, labels);
      if (!sc.better_than(best)) return false;
      best = sc;
      used = std::move(trial);
      c = std::move(tc);
      return true;
    };
    const CalibrationStats base = used;
    const int e_scores = c.act[(size_t)scores];
    for (int d = 1; d <= 4; ++d) attempt(base, scores, -d, e_scores - d);
    for (int i = 0; i < L; ++i) {
      const int t = calibrated_tensor(plan, i);
      if (keeps_exponent(plan.desc.layers[i].type) || t == scores) continue;
      const int e = c.act[(size_t)t];
      if (!attempt(used, t, -1, e - 1)) attempt(used, t, 1, e + 1);
    }
    for (int i = 0; i < L; ++i) {
      const int t = i + 1;
      if (keeps_exponent(plan.desc.layers[i].type) || c.act[(size_t)t] == before[(size_t)t]) continue;
      act_notes[(size_t)i] = layer_label(plan, i) + ": its output exponent" +
                             (calibrated_tensor(plan, i) == scores ? " (the grid's logits)" : "") + " was " +
                             (c.act[(size_t)t] < before[(size_t)t] ? "lowered" : "raised") + " from " +
                             std::to_string(before[(size_t)t]) + " to " + std::to_string(c.act[(size_t)t]) +
                             ": the int8 detector then decodes the same class as the float model in more grid "
                             "cells of the calibration images scored (" +
                             grouped((uint64_t)best.agree) + " of " + grouped((uint64_t)cells) +
                             " with every change made).";
    }
  }
  std::vector<AccObserved> obs;
  for (int round = 0;; ++round) {
    r.blob = assemble(plan, params, c, labels, provenance, &r.act_exps);
    if (!have_images) break;
    obs = observe(plan, r.blob, *images, *idx, options.threads);
    if (options.acc_check != AccCheck::Calibrated) break;
    int raise = -1;
    for (int i = 0; i < L && raise < 0; ++i)
      if (tv::layer_has_params(plan.desc.layers[i].type) && obs[(size_t)i].max_partial > kCalibratedAccLimit) raise = i;
    if (raise < 0) break;
    if (round > 64 * L)
      throw Error(layer_label(plan, raise) + ": no weight exponent keeps its accumulation inside 20 bits.");
    extra_w[(size_t)raise]++;
    c = choose(plan, params, used, options, extra_w, extra_act);
  }
  r.layers = c.layers;
  for (LayerQuant& q : r.layers) {
    if (!act_notes[(size_t)q.index].empty()) q.adjustments.insert(q.adjustments.begin(), act_notes[(size_t)q.index]);
    if (have_images && q.has_params) {
      q.observed_acc = obs[(size_t)q.index].max_partial;
      q.observed_headroom_bits = tv::headroom_bits_s8(q.observed_acc);
    }
    if (q.has_params && q.bound_headroom_bits < 0)
      q.adjustments.push_back(
          layer_label(plan, q.index) + ": NOT GUARANTEED on the ESP32-S3: with inputs in [" + std::to_string(q.in_lo) +
          ", " + std::to_string(q.in_hi) + "] its accumulation can reach " + grouped(q.acc_bound) +
          ", beyond the 20-bit accumulator (limit " + grouped(tv::kS3AccLimit) +
          "); the calibration images reached at most " + grouped(q.observed_acc) +
          " (--acc-check calibrated), an input that drives it further gives a different result on the device.");
    for (const auto& s : q.adjustments) r.adjustments.push_back(s);
  }
  r.float_weight_bytes = plan.param_count * sizeof(float);
  r.int8_weight_bytes = tv::q8_memory(plan).weight_bytes;
  return r;
}

std::string quant_table(const tv::ModelPlan& plan, const QuantResult& r) {
  std::vector<std::vector<std::string>> rows = {{"layer", "type", "output", "e_in", "e_w", "e_out", "shift",
                                                 "int8 input", "|acc| bound", "headroom", "seen |acc|", "range"}};
  for (const LayerQuant& q : r.layers) {
    const tv::LayerPlan& lp = plan.layers[q.index];
    std::string shape = std::to_string(lp.out.h) + "x" + std::to_string(lp.out.w) + "x" + std::to_string(lp.out.c);
    std::string ew = "-", shift = "-", bound = "-", head = "-", seen = "-", in = "-";
    if (q.has_params) {
      ew = q.e_w_channels.empty() ? std::to_string(q.e_w) : "ch";
      shift = q.shift_min == q.shift_max ? std::to_string(q.shift_min)
                                         : std::to_string(q.shift_min) + ".." + std::to_string(q.shift_max);
      in = "[" + std::to_string(q.in_lo) + "," + std::to_string(q.in_hi) + "]";
      bound = grouped(q.acc_bound);
      head = std::to_string(q.bound_headroom_bits) + " bit" + (std::abs(q.bound_headroom_bits) == 1 ? "" : "s");
      if (q.observed_acc) seen = grouped(q.observed_acc);
    }
    rows.push_back({std::to_string(q.index), q.type, shape, std::to_string(q.e_in), ew, std::to_string(q.e_out), shift,
                    in, bound, head, seen, q.calib_range > 0 ? fmt("%.4g", q.calib_range) : "-"});
  }
  return format_table(rows, "lll");
}

}  // namespace tvh
