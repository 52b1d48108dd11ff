#include "tv/int8/q8_model.h"

#include <string.h>

#include "tv/in_place.h"
#include "tv/model/layer_unit.h"

namespace tv {

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
  if (!m) return status_plain(StatusCode::InvalidArgument);
  if (!v.is_int8()) return status_plain(StatusCode::NotSupported);
  if (!same_model(v.model, plan.desc)) return status_plain(StatusCode::BlobModelMismatch);
  const int L = plan.num_layers;
  if (v.num_act_exps != L + 1) return status_not_expected(StatusCode::BlobCorrupt, -1, v.num_act_exps, L + 1);
  reset_in_place(m);
  m->plan = &plan;
  memcpy(m->act_exps, v.act_exps, (size_t)L + 1);
  for (int i = 0; i < L; ++i) {
    const LayerDesc& d = plan.desc.layers[i];
    const LayerPlan& lp = plan.layers[i];
    const int e_in = m->act_exps[i], e_out = m->act_exps[i + 1];
    if (layer_info(d.type).int8 == Int8Exponent::KeepsInput && e_out != e_in)
      return status_not_expected(StatusCode::BlobCorrupt, i, e_out, e_in);
    // What the kernels accept (int8_ops.h): refused here, so that q8_run cannot fail later.
    const Status accepted = layer_unit(d.type).int8.bind(v, plan, i, m);
    if (!accepted.ok()) return accepted;
    if (!layer_has_params(d.type)) continue;
    const BlobTensor* w = blob_find(v, i, TensorRole::Weight);
    const BlobTensor* b = blob_find(v, i, TensorRole::Bias);
    if (!w || !b) return status_plain(StatusCode::BlobMissingTensor, i);
    if (w->dtype != DType::I8 || b->dtype != DType::I32 || w->elements() != lp.weight_count ||
        b->elements() != lp.bias_count)
      return status_plain(StatusCode::BlobModelMismatch, i);
    m->weights[i] = (const int8_t*)w->data;
    m->biases[i] = (const int32_t*)b->data;
    m->weight_exp[i] = w->exponent;
    if (w->exp_count) {
      if (w->exp_count != lp.bias_count || !layer_info(d.type).per_channel)
        return status_plain(StatusCode::NotSupported, i);
      m->channel_exps[i] = w->channel_exps;
      for (int c = 0; c < w->exp_count; ++c)
        if (e_out - e_in - w->channel_exps[c] < 0)
          return status_channel_value(StatusCode::BadParameter, i, c, e_out - e_in - w->channel_exps[c]);
    } else if (e_out - e_in - w->exponent < 0) {
      return status_value(StatusCode::BadParameter, i, e_out - e_in - w->exponent);
    }
  }
  return ok_status();
}

Status q8_run(const Q8Model& m, const int8_t* input, int8_t* work, const int8_t** output) {
  if (!m.plan || !input || !work || !output) return status_plain(StatusCode::InvalidArgument);
  const ModelPlan& plan = *m.plan;
  const size_t total = plan.infer_floats;
  int8_t* cur = work;
  if (input != work) memcpy(work, input, plan.input.size());
  bool low = true;
  for (int i = 0; i < plan.num_layers; ++i) {
    const LayerUnit& unit = layer_unit(plan.desc.layers[i].type);
    const size_t n = plan.layers[i].out.size();
    int8_t* out = unit.row.in_place ? cur : (low ? work + total - n : work);
    Status st = unit.int8.run(m, i, cur, out);
    if (!st.ok()) {
      st.layer = (int16_t)i;
      return st;
    }
    if (!unit.row.in_place) {
      cur = out;
      low = !low;
    }
  }
  *output = cur;
  return ok_status();
}

Status q8_infer_u8(const Q8Model& m, const uint8_t* image, int8_t* work, float* probs, int8_t* logits) {
  if (!m.plan || !image || !work) return status_plain(StatusCode::InvalidArgument);
  const ModelPlan& plan = *m.plan;
  const size_t n = plan.input.size();
  const float scale = plan.desc.input.scale, offset = plan.desc.input.offset;
  const int e = m.act_exps[0];
  for (size_t i = 0; i < n; ++i) work[i] = quantize_one_s8((float)image[i] * scale + offset, e);
  const int8_t* out = nullptr;
  const Status st = q8_run(m, work, work, &out);
  if (!st.ok()) return st;
  const int k = plan.desc.num_classes;
  const size_t outputs = plan_outputs(plan);  // a detector: a row of k per grid cell
  if (probs)
    for (size_t at = 0; at < outputs; at += (size_t)k) softmax_s8(out + at, k, m.act_exps[plan.num_layers], probs + at);
  if (logits) memcpy(logits, out, outputs);
  return ok_status();
}

}  // namespace tv
