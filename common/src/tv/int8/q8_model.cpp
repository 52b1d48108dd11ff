#include "tv/int8/q8_model.h"

#include <string.h>

namespace tv {

namespace {

bool uniform_bins(int in, int out) {
  return out > 0 && in % out == 0;
}

// A conv/dense with per-output-channel weight exponents (not an S3 feature): plain loops, each
// channel requantized with its own shift.
void conv2d_s8_per_channel(const Geom2D& g, const int8_t* in, const int8_t* w, const int32_t* b, int e_in,
                           const int8_t* e_w, int e_out, int8_t* out) {
  const int taps = g.k_h * g.k_w * g.in_c;
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int o = 0; o < g.out_c; ++o) {
        int64_t acc = b ? b[o] : 0;
        const int8_t* wf = w + (size_t)o * taps;
        for (int ky = 0; ky < g.k_h; ++ky) {
          int iy = oy * g.stride_h - g.pad_top + ky;
          if (iy < 0 || iy >= g.in_h) continue;
          for (int kx = 0; kx < g.k_w; ++kx) {
            int ix = ox * g.stride_w - g.pad_left + kx;
            if (ix < 0 || ix >= g.in_w) continue;
            const int8_t* px = in + ((size_t)iy * g.in_w + ix) * g.in_c;
            const int8_t* wk = wf + (ky * g.k_w + kx) * g.in_c;
            for (int i = 0; i < g.in_c; ++i) acc += (int32_t)px[i] * wk[i];
          }
        }
        out[((size_t)oy * g.out_w + ox) * g.out_c + o] = requantize_s8(acc, e_out - e_in - e_w[o]);
      }
}

void dense_s8_per_channel(int in_n, int out_n, const int8_t* in, const int8_t* w, const int32_t* b, int e_in,
                          const int8_t* e_w, int e_out, int8_t* out) {
  for (int o = 0; o < out_n; ++o) {
    int64_t acc = b ? b[o] : 0;
    const int8_t* row = w + (size_t)o * in_n;
    for (int i = 0; i < in_n; ++i) acc += (int32_t)in[i] * row[i];
    out[o] = requantize_s8(acc, e_out - e_in - e_w[o]);
  }
}

}  // namespace

size_t q8_layer_weight_bytes(const LayerPlan& layer) {
  return (layer.weight_count + 15) / 16 * 16 + layer.bias_count * 4;
}

Q8Memory q8_memory(const ModelPlan& plan) {
  Q8Memory m;
  m.weight_bytes = 0;
  for (int i = 0; i < plan.num_layers; ++i) m.weight_bytes += q8_layer_weight_bytes(plan.layers[i]);
  m.work_bytes = (plan.infer_floats + 15) / 16 * 16;
  m.total_bytes = m.weight_bytes + m.work_bytes;
  return m;
}

Status q8_bind(const BlobView& v, const ModelPlan& plan, Q8Model* m) {
  if (!m) return make_status(StatusCode::InvalidArgument);
  if (!v.is_int8()) return make_status(StatusCode::NotSupported);
  if (!same_model(v.model, plan.desc)) return make_status(StatusCode::BlobModelMismatch);
  const int L = plan.num_layers;
  if (v.num_act_exps != L + 1) return make_status(StatusCode::BlobCorrupt, -1, v.num_act_exps, L + 1);
  *m = Q8Model();
  m->plan = &plan;
  memcpy(m->act_exps, v.act_exps, (size_t)L + 1);
  for (int i = 0; i < L; ++i) {
    const LayerDesc& d = plan.desc.layers[i];
    const LayerPlan& lp = plan.layers[i];
    const int e_in = m->act_exps[i], e_out = m->act_exps[i + 1];
    if (layer_info(d.type).int8 == Int8Exponent::KeepsInput && e_out != e_in)
      return make_status(StatusCode::BlobCorrupt, i, e_out, e_in);
    // What the kernels accept (int8_ops.h): refused here, so that q8_run cannot fail later.
    switch (d.type) {
      case LayerType::Conv2D: {
        const int64_t fan_in = (int64_t)lp.geom.k_h * lp.geom.k_w * lp.in.c;
        if (fan_in > kInt8MaxFanIn) return make_status(StatusCode::NotSupported, i, (int32_t)fan_in, kInt8MaxFanIn);
        break;
      }
      case LayerType::Dense:
        if ((int64_t)lp.in.size() > kInt8MaxFanIn)
          return make_status(StatusCode::NotSupported, i, (int32_t)lp.in.size(), kInt8MaxFanIn);
        break;
      case LayerType::AvgPool2D:
        if ((int64_t)lp.geom.k_h * lp.geom.k_w > kInt8MaxPoolArea)
          return make_status(StatusCode::NotSupported, i, lp.geom.k_h * lp.geom.k_w, (int32_t)kInt8MaxPoolArea);
        break;
      case LayerType::AdaptiveAvgPool2D:
        if (!uniform_bins(lp.in.h, lp.out.h) || !uniform_bins(lp.in.w, lp.out.w))
          return make_status(StatusCode::NotSupported, i);
        [[fallthrough]];  // a uniform-bin pool's window is at most the whole plane
      case LayerType::GlobalAvgPool:
        if ((int64_t)lp.in.h * lp.in.w > kInt8MaxPoolArea)
          return make_status(StatusCode::NotSupported, i, (int32_t)((int64_t)lp.in.h * lp.in.w),
                             (int32_t)kInt8MaxPoolArea);
        break;
      case LayerType::LeakyReLU: leaky_relu_table_s8(d.alpha, e_in, e_out, m->luts[i]); break;
      case LayerType::DepthwiseConv2D:
      case LayerType::MaxPool2D:
      case LayerType::ReLU:
      case LayerType::Clip:
      case LayerType::Flatten: break;
    }
    if (!layer_has_params(d.type)) continue;
    const BlobTensor* w = blob_find(v, i, TensorRole::Weight);
    const BlobTensor* b = blob_find(v, i, TensorRole::Bias);
    if (!w || !b) return make_status(StatusCode::BlobMissingTensor, i);
    if (w->dtype != DType::I8 || b->dtype != DType::I32 || w->elements() != lp.weight_count ||
        b->elements() != lp.bias_count)
      return make_status(StatusCode::BlobModelMismatch, i);
    m->weights[i] = (const int8_t*)w->data;
    m->biases[i] = (const int32_t*)b->data;
    m->weight_exp[i] = w->exponent;
    if (w->exp_count) {
      if (w->exp_count != lp.bias_count || d.type == LayerType::DepthwiseConv2D)
        return make_status(StatusCode::NotSupported, i);
      m->channel_exps[i] = w->channel_exps;
      for (int c = 0; c < w->exp_count; ++c)
        if (e_out - e_in - w->channel_exps[c] < 0)
          return make_status(StatusCode::BadParameter, i, c, e_out - e_in - w->channel_exps[c]);
    } else if (e_out - e_in - w->exponent < 0) {
      return make_status(StatusCode::BadParameter, i, e_out - e_in - w->exponent, 0);
    }
  }
  return ok_status();
}

Status q8_run(const Q8Model& m, const int8_t* input, int8_t* work, const int8_t** output) {
  if (!m.plan || !input || !work || !output) return make_status(StatusCode::InvalidArgument);
  const ModelPlan& plan = *m.plan;
  const size_t total = plan.infer_floats;
  int8_t* cur = work;
  if (input != work) memcpy(work, input, plan.input.size());
  bool low = true;
  for (int i = 0; i < plan.num_layers; ++i) {
    const LayerDesc& d = plan.desc.layers[i];
    const LayerPlan& lp = plan.layers[i];
    const int e_in = m.act_exps[i], e_out = m.act_exps[i + 1];
    const size_t n = lp.out.size();
    int8_t* out = layer_in_place(d.type) ? cur : (low ? work + total - n : work);
    Q8Layer q;
    q.e_in = e_in;
    q.e_w = m.weight_exp[i];
    q.e_out = e_out;
    Status st;
    switch (d.type) {
      case LayerType::ReLU: relu_s8(cur, n); break;
      case LayerType::LeakyReLU: lut_s8(m.luts[i], cur, n, cur); break;
      case LayerType::Clip: {
        const int8_t lo = quantize_one_s8(d.lo, e_in), hi = quantize_one_s8(d.hi, e_in);
        for (size_t k = 0; k < n; ++k) cur[k] = cur[k] < lo ? lo : (cur[k] > hi ? hi : cur[k]);
        break;
      }
      case LayerType::Flatten: break;  // only reinterprets the shape
      case LayerType::Conv2D:
        if (m.channel_exps[i])
          conv2d_s8_per_channel(lp.geom, cur, m.weights[i], m.biases[i], e_in, m.channel_exps[i], e_out, out);
        else
          st = conv2d_s8(lp.geom, cur, m.weights[i], m.biases[i], q, out);
        break;
      case LayerType::DepthwiseConv2D: st = depthwise_conv2d_s8(lp.geom, cur, m.weights[i], m.biases[i], q, out); break;
      case LayerType::Dense:
        if (m.channel_exps[i])
          dense_s8_per_channel((int)lp.in.size(), lp.out.c, cur, m.weights[i], m.biases[i], e_in, m.channel_exps[i],
                               e_out, out);
        else
          st = dense_s8((int)lp.in.size(), lp.out.c, cur, m.weights[i], m.biases[i], q, out);
        break;
      case LayerType::MaxPool2D: st = maxpool2d_s8(lp.geom, cur, out); break;
      case LayerType::AvgPool2D: st = avgpool2d_s8(lp.geom, cur, e_in, e_out, out); break;
      case LayerType::GlobalAvgPool: st = global_avgpool_s8(lp.in.h, lp.in.w, lp.in.c, cur, e_in, e_out, out); break;
      case LayerType::AdaptiveAvgPool2D: {
        if (lp.out.h == 1 && lp.out.w == 1) {
          st = global_avgpool_s8(lp.in.h, lp.in.w, lp.in.c, cur, e_in, e_out, out);
        } else {
          const int kh = lp.in.h / lp.out.h, kw = lp.in.w / lp.out.w;
          Geom2D g{lp.in.h, lp.in.w, lp.in.c, lp.out.h, lp.out.w, lp.out.c, kh, kw, kh, kw, 0, 0};
          st = avgpool2d_s8(g, cur, e_in, e_out, out);
        }
        break;
      }
    }
    if (!st.ok()) {
      st.layer = (int16_t)i;
      return st;
    }
    if (!layer_in_place(d.type)) {
      cur = out;
      low = !low;
    }
  }
  *output = cur;
  return ok_status();
}

Status q8_infer_u8(const Q8Model& m, const uint8_t* image, int8_t* work, float* probs, int8_t* logits) {
  if (!m.plan || !image || !work) return make_status(StatusCode::InvalidArgument);
  const ModelPlan& plan = *m.plan;
  const size_t n = plan.input.size();
  const float scale = plan.desc.input.scale, offset = plan.desc.input.offset;
  const int e = m.act_exps[0];
  for (size_t i = 0; i < n; ++i) work[i] = quantize_one_s8((float)image[i] * scale + offset, e);
  const int8_t* out = nullptr;
  const Status st = q8_run(m, work, work, &out);
  if (!st.ok()) return st;
  const int k = plan.desc.num_classes;
  if (probs) softmax_s8(out, k, m.act_exps[plan.num_layers], probs);
  if (logits) memcpy(logits, out, (size_t)k);
  return ok_status();
}

}  // namespace tv
