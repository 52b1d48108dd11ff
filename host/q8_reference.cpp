#include "host/q8_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "host/error.h"

namespace tvh {

namespace {

int64_t abs64(int64_t v) {
  return v < 0 ? -v : v;
}

int8_t saturate(int64_t v) {
  return (int8_t)std::max<int64_t>(-128, std::min<int64_t>(127, v));
}

// q = clamp(floor(x * 2^-e + 1/2)), exact in double.
int8_t to_int8(float x, int e) {
  if (x != x) return 0;
  double v = std::ldexp((double)x, -e);
  if (v >= 127.5) return 127;
  if (v < -128.5) return -128;
  return saturate((int64_t)std::floor(v + 0.5));
}

// floor(acc / 2^s + 1/2) for s > 0 (round half up), acc itself for s == 0; saturated to int8.
int8_t requantize(int64_t acc, int s) {
  if (s == 0) return saturate(acc);
  if (s > 62) return 0;  // |acc| < 2^61 here
  const int64_t d = int64_t(1) << s;
  int64_t n = acc + d / 2;
  int64_t q = n / d;
  if (n % d != 0 && n < 0) --q;
  return saturate(q);
}

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
    if (obs) obs->max_partial = std::max(obs->max_partial, abs64(exact));
  }
  int64_t finish() {
    if (obs) obs->max_final = std::max(obs->max_final, abs64(exact));
    return bits ? lane : exact;
  }
};

// out = floor(sum * 2^(e_in - e_out) / area + 1/2), exactly.
int8_t average(int64_t sum, int64_t area, int e_in, int e_out) {
  int64_t num = sum, den = area;
  const int d = e_in - e_out;
  if (d >= 0)
    num = sum * (int64_t(1) << std::min(d, 40));
  else
    den = area * (int64_t(1) << std::min(-d, 40));
  int64_t n = 2 * num + den, q = n / (2 * den);
  if (n % (2 * den) != 0 && n < 0) --q;
  return saturate(q);
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
  m.weights.resize((size_t)L);
  m.biases.resize((size_t)L);
  m.weight_exps.resize((size_t)L);
  for (int i = 0; i < L; ++i) {
    if (!tv::layer_has_params(plan.desc.layers[i].type)) continue;
    const tv::BlobTensor* w = tv::blob_find(v, i, tv::TensorRole::Weight);
    const tv::BlobTensor* b = tv::blob_find(v, i, tv::TensorRole::Bias);
    const tv::LayerPlan& lp = plan.layers[i];
    if (!w || !b || w->dtype != tv::DType::I8 || b->dtype != tv::DType::I32 || w->elements() != lp.weight_count ||
        b->elements() != lp.bias_count)
      throw Error("layer " + std::to_string(i) +
                  ": the int8 weight or int32 bias tensor is missing or has the wrong size.");
    const int8_t* wp = (const int8_t*)w->data;
    m.weights[(size_t)i].assign(wp, wp + lp.weight_count);
    m.biases[(size_t)i].resize(lp.bias_count);
    std::memcpy(m.biases[(size_t)i].data(), b->data, lp.bias_count * sizeof(int32_t));
    if (w->exp_count) {
      if (w->exp_count != lp.bias_count)
        throw Error("layer " + std::to_string(i) + ": per-channel exponent count mismatch.");
      m.weight_exps[(size_t)i].assign(w->channel_exps, w->channel_exps + w->exp_count);
    } else {
      m.weight_exps[(size_t)i].assign(1, w->exponent);
    }
  }
  return m;
}

std::vector<int8_t> q8_reference_input(const tv::ModelPlan& plan, int e_in, const uint8_t* image) {
  std::vector<int8_t> q(plan.input.size());
  const float scale = plan.desc.input.scale, offset = plan.desc.input.offset;
  for (size_t k = 0; k < q.size(); ++k) q[k] = to_int8((float)image[k] * scale + offset, e_in);
  return q;
}

std::vector<int8_t> q8_reference_run(const Q8Reference& m, const int8_t* input, int acc_bits,
                                     std::vector<AccObserved>* observed, std::vector<std::vector<int8_t>>* outputs) {
  const tv::ModelPlan& plan = *m.plan;
  std::vector<int8_t> cur(input, input + plan.input.size());
  if (outputs) outputs->assign((size_t)plan.num_layers, {});
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    const tv::LayerPlan& lp = plan.layers[i];
    const tv::Geom2D& g = lp.geom;
    const int e_in = m.act_exps[(size_t)i], e_out = m.act_exps[(size_t)i + 1];
    const std::vector<int8_t>& w = m.weights[(size_t)i];
    const std::vector<int32_t>& b = m.biases[(size_t)i];
    const std::vector<int>& ew = m.weight_exps[(size_t)i];
    auto shift_of = [&](int o) { return e_out - e_in - (ew.size() == 1 ? ew[0] : ew[(size_t)o]); };
    AccObserved* obs = observed ? &(*observed)[(size_t)i] : nullptr;
    std::vector<int8_t> out(lp.out.size(), 0);
    auto in_at = [&](int y, int x, int c) { return (int64_t)cur[((size_t)y * lp.in.w + x) * lp.in.c + c]; };
    switch (d.type) {
      case tv::LayerType::Conv2D:
      case tv::LayerType::DepthwiseConv2D: {
        const bool dw = d.type == tv::LayerType::DepthwiseConv2D;
        for (int oy = 0; oy < g.out_h; ++oy)
          for (int ox = 0; ox < g.out_w; ++ox)
            for (int o = 0; o < g.out_c; ++o) {
              Acc acc{acc_bits, obs};
              acc.start(b[(size_t)o]);
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
              out[((size_t)oy * g.out_w + ox) * g.out_c + o] = requantize(acc.finish(), shift_of(o));
            }
        break;
      }
      case tv::LayerType::Dense: {
        const size_t n = lp.in.size();
        for (int o = 0; o < lp.out.c; ++o) {
          Acc acc{acc_bits, obs};
          acc.start(b[(size_t)o]);
          for (size_t k = 0; k < n; ++k) acc.add((int64_t)cur[k] * w[(size_t)o * n + k]);
          out[(size_t)o] = requantize(acc.finish(), shift_of(o));
        }
        break;
      }
      case tv::LayerType::MaxPool2D:
        for (int oy = 0; oy < g.out_h; ++oy)
          for (int ox = 0; ox < g.out_w; ++ox)
            for (int c = 0; c < g.out_c; ++c) {
              int64_t best = -1000;
              for (int ky = 0; ky < g.k_h; ++ky)
                for (int kx = 0; kx < g.k_w; ++kx) {
                  const int iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
                  if (iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w) best = std::max(best, in_at(iy, ix, c));
                }
              out[((size_t)oy * g.out_w + ox) * g.out_c + c] = best == -1000 ? 0 : (int8_t)best;
            }
        break;
      case tv::LayerType::AvgPool2D:
      case tv::LayerType::GlobalAvgPool:
      case tv::LayerType::AdaptiveAvgPool2D: {
        const int kh = lp.in.h / lp.out.h, kw = lp.in.w / lp.out.w;
        const bool window = d.type == tv::LayerType::AvgPool2D;
        for (int oy = 0; oy < lp.out.h; ++oy)
          for (int ox = 0; ox < lp.out.w; ++ox)
            for (int c = 0; c < lp.out.c; ++c) {
              int64_t sum = 0;
              const int h = window ? g.k_h : kh, wd = window ? g.k_w : kw;
              for (int ky = 0; ky < h; ++ky)
                for (int kx = 0; kx < wd; ++kx) {
                  const int iy = oy * (window ? g.stride_h : kh) - (window ? g.pad_top : 0) + ky;
                  const int ix = ox * (window ? g.stride_w : kw) - (window ? g.pad_left : 0) + kx;
                  if (iy >= 0 && iy < lp.in.h && ix >= 0 && ix < lp.in.w) sum += in_at(iy, ix, c);
                }
              out[((size_t)oy * lp.out.w + ox) * lp.out.c + c] = average(sum, (int64_t)h * wd, e_in, e_out);
            }
        break;
      }
      case tv::LayerType::ReLU:
        for (size_t k = 0; k < out.size(); ++k) out[k] = cur[k] > 0 ? cur[k] : 0;
        break;
      case tv::LayerType::LeakyReLU:
        for (size_t k = 0; k < out.size(); ++k) {
          const float x = std::ldexp((float)cur[k], e_in);
          const float y = x > 0 ? x : d.alpha * x;
          out[k] = to_int8(y, e_out);
        }
        break;
      case tv::LayerType::Clip: {
        const int8_t lo = to_int8(d.lo, e_in), hi = to_int8(d.hi, e_in);
        for (size_t k = 0; k < out.size(); ++k) out[k] = std::max(lo, std::min(hi, cur[k]));
        break;
      }
      case tv::LayerType::Flatten: out = cur; break;
    }
    cur.swap(out);
    if (outputs) (*outputs)[(size_t)i] = cur;
  }
  return cur;
}

}  // namespace tvh
