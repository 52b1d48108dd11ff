#include "host/quant/q8_reference.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "host/base/error.h"
#include "host/model/model_io.h"
#include "tv/int8/int8_ops.h"
#include "tv/model/layer_unit.h"

namespace tvh {

namespace {

// The running sum as a 20-bit (or wider) lane would hold it.
int64_t wrap(int64_t v, int bits) {
  if (bits <= 0 || bits >= 63) return v;
  const int64_t m = int64_t(1) << bits, h = m / 2;
  int64_t r = ((v + h) % m + m) % m;
  return r - h;
}

struct Acc {
  int bits;
  AccObserved* obs;
  int64_t exact = 0, lane = 0;
  void start(int64_t b) {
    exact = b;
    lane = wrap(b, bits);
    note();
  }
  void add(int64_t p) {
    exact += p;
    lane = wrap(lane + p, bits);
    note();
  }
  void note() {
    if (obs) obs->max_partial = std::max(obs->max_partial, std::abs(exact));
  }
  int64_t finish() {
    if (obs) obs->max_final = std::max(obs->max_final, std::abs(exact));
    return bits ? lane : exact;
  }
};

// Layer i of the engine's tensors: its weight exponent for output o.
int weight_exp(const tv::Q8Model& m, int i, int o) {
  return m.channel_exps[i] ? m.channel_exps[i][o] : m.weight_exp[i];
}

// A conv / depthwise layer, one running sum per output in the order bias, then taps (ky, kx, c).
void conv_sums(const tv::Q8Model& m, int i, const int8_t* cur, int acc_bits, AccObserved* obs, int8_t* out) {
  const tv::LayerPlan& lp = m.plan->layers[i];
  const tv::Geom2D& g = lp.geom;
  const bool dw = m.plan->desc.layers[i].type == tv::LayerType::DepthwiseConv2D;
  const int8_t* w = m.weights[i];
  const int e_in = m.act_exps[i], e_out = m.act_exps[i + 1];
  auto in_at = [&](int y, int x, int c) { return (int64_t)cur[((size_t)y * lp.in.w + x) * lp.in.c + c]; };
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int o = 0; o < g.out_c; ++o) {
        Acc acc{acc_bits, obs};
        acc.start(m.biases[i][o]);
        for (int ky = 0; ky < g.k_h; ++ky)
          for (int kx = 0; kx < g.k_w; ++kx) {
            const int iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
            if (dw) {
              acc.add(in_at(iy, ix, o) * w[((size_t)ky * g.k_w + kx) * g.in_c + o]);
            } else {
              for (int c = 0; c < g.in_c; ++c)
                acc.add(in_at(iy, ix, c) * w[(((size_t)o * g.k_h + ky) * g.k_w + kx) * g.in_c + c]);
            }
          }
        out[((size_t)oy * g.out_w + ox) * g.out_c + o] =
            tv::requantize_s8(acc.finish(), e_out - e_in - weight_exp(m, i, o));
      }
}

// A dense layer, one running sum per output in the order bias, then inputs.
void dense_sums(const tv::Q8Model& m, int i, const int8_t* cur, int acc_bits, AccObserved* obs, int8_t* out) {
  const tv::LayerPlan& lp = m.plan->layers[i];
  const size_t n = lp.in.size();
  for (int o = 0; o < lp.out.c; ++o) {
    Acc acc{acc_bits, obs};
    acc.start(m.biases[i][o]);
    for (size_t k = 0; k < n; ++k) acc.add((int64_t)cur[k] * m.weights[i][(size_t)o * n + k]);
    out[(size_t)o] = tv::requantize_s8(acc.finish(), m.act_exps[i + 1] - m.act_exps[i] - weight_exp(m, i, o));
  }
}

}  // namespace

Q8Reference q8_reference_load(const tv::BlobView& v, const tv::ModelPlan& plan) {
  if (!v.is_int8()) throw Error("not an int8 blob.");
  if (!tv::same_model(v.model, plan.desc)) throw Error("the blob holds another model.");
  const int L = plan.num_layers;
  if (v.num_act_exps != L + 1)
    throw Error("the blob has " + std::to_string(v.num_act_exps) + " activation exponents, not " +
                std::to_string(L + 1) + ".");
  Q8Reference m;
  m.plan = &plan;
  m.act_exps.assign(v.act_exps, v.act_exps + L + 1);
  const tv::Status st = tv::q8_bind(v, plan, &m.engine);
  if (!st.ok()) throw Error("the int8 engine cannot run the blob: " + status_message(st, &plan.desc) + ".");
  return m;
}

std::vector<int8_t> q8_reference_input(const tv::ModelPlan& plan, int e_in, const uint8_t* image) {
  std::vector<int8_t> q(plan.input.size());
  const float scale = plan.desc.input.scale, offset = plan.desc.input.offset;
  for (size_t k = 0; k < q.size(); ++k) q[k] = tv::quantize_one_s8((float)image[k] * scale + offset, e_in);
  return q;
}

std::vector<int8_t> q8_reference_run(const Q8Reference& m, const int8_t* input, int acc_bits,
                                     std::vector<AccObserved>* observed, std::vector<std::vector<int8_t>>* outputs) {
  const tv::ModelPlan& plan = *m.plan;
  std::vector<int8_t> cur(input, input + plan.input.size());
  if (outputs) outputs->assign((size_t)plan.num_layers, {});
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerType type = plan.desc.layers[i].type;
    AccObserved* obs = observed ? &(*observed)[(size_t)i] : nullptr;
    std::vector<int8_t> out(plan.layers[i].out.size(), 0);
    if (type == tv::LayerType::Dense) {
      dense_sums(m.engine, i, cur.data(), acc_bits, obs, out.data());
    } else if (tv::layer_has_params(type)) {
      conv_sums(m.engine, i, cur.data(), acc_bits, obs, out.data());
    } else {
      // Without weights there is no accumulator: the core's int8 step of the layer (its unit).
      if (tv::layer_in_place(type)) out = cur;
      const tv::Status st = tv::layer_unit(type).int8.run(m.engine, i, cur.data(), out.data());
      if (!st.ok()) throw Error("layer " + std::to_string(i) + ": " + status_message(st, &plan.desc) + ".");
    }
    cur.swap(out);
    if (outputs) (*outputs)[(size_t)i] = cur;
  }
  return cur;
}

}  // namespace tvh
