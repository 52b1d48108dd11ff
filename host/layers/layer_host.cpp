// The host side of every layer type: config fields, pruning rule, .espdl emission (host/layers/layer_host.h).
#include "host/layers/layer_host.h"

#include "host/base/error.h"
#include "host/espdl/espdl.h"
#include "host/espdl/export_graph.h"

namespace tvh {

std::vector<int> channel_range(int n) {
  std::vector<int> v((size_t)n);
  for (int i = 0; i < n; ++i) v[(size_t)i] = i;
  return v;
}

namespace {

// Element indices of an h x w x c tensor (HWC) that belong to channels `kept`, in HWC order.
std::vector<int> hwc_indices(int h, int w, int c, const std::vector<int>& kept) {
  std::vector<int> out;
  out.reserve((size_t)h * w * kept.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k : kept) out.push_back((y * w + x) * c + k);
  return out;
}

// ---- Config fields ----

// A type without fields of its own.
template <tv::LayerType type>
tv::LayerDesc config_no_fields(const LayerConfig& c) {
  c.only({"type"});
  tv::LayerDesc l;
  l.type = type;
  return l;
}

tv::LayerDesc config_conv2d(const LayerConfig& c) {
  c.only({"type", "filters", "kernel", "stride", "padding"});
  const tv::Padding pad = c.padding("valid");
  return tv::conv2d_layer(c.integer("filters", 1, 4096, 8), c.integer("kernel", 1, 15, 3), c.integer("stride", 1, 8, 1),
                          pad);
}

tv::LayerDesc config_depthwise(const LayerConfig& c) {
  c.only({"type", "kernel", "stride", "padding"});
  const tv::Padding pad = c.padding("same");
  return tv::depthwise_layer(c.integer("kernel", 1, 15, 3), c.integer("stride", 1, 8, 1), pad);
}

// A square window, the stride = the kernel unless given.
tv::LayerDesc config_pool(const LayerConfig& c, bool max) {
  c.only({"type", "kernel", "stride"});
  const int k = c.integer("kernel", 1, 15, 2);
  const int s = c.integer("stride", 1, 15, k);
  return max ? tv::maxpool_layer(k, s) : tv::avgpool_layer(k, s);
}

tv::LayerDesc config_maxpool(const LayerConfig& c) {
  return config_pool(c, true);
}

tv::LayerDesc config_avgpool(const LayerConfig& c) {
  return config_pool(c, false);
}

tv::LayerDesc config_adaptive_avgpool(const LayerConfig& c) {
  c.only({"type", "out_h", "out_w"});
  return tv::adaptive_avgpool_layer(c.integer("out_h", 1, 4096, 1), c.integer("out_w", 1, 4096, 1));
}

tv::LayerDesc config_dense(const LayerConfig& c) {
  c.only({"type", "units"});
  return tv::dense_layer(c.integer("units", 0, 65535, 0));
}

tv::LayerDesc config_leaky_relu(const LayerConfig& c) {
  c.only({"type", "alpha"});
  return tv::leaky_relu_layer((float)c.number("alpha", 0.0, 0.999, 0.1));
}

tv::LayerDesc config_clip(const LayerConfig& c) {
  c.only({"type", "lo", "hi"});
  return tv::clip_layer((float)c.number("lo", -1e30, 0, -50), (float)c.number("hi", 1e-30, 1e30, 50));
}

// ---- Pruning: how the kept channels and parameters follow through a layer ----

// Output channel c depends on input channel c only, without parameters: the channel set is kept.
void prune_keeps_channels(const PruneStep&, std::vector<int>*) {}

void prune_conv2d(const PruneStep& s, std::vector<int>* kept) {
  const std::vector<int> outs = s.keep.empty() ? channel_range(s.lp.out.c) : s.keep;
  const int kk = s.d.kernel_h * s.d.kernel_w, cin = s.lp.in.c, ncin = (int)kept->size();
  for (size_t o = 0; o < outs.size(); ++o) {
    for (int t = 0; t < kk; ++t)
      for (int c = 0; c < ncin; ++c)
        s.nw[(o * kk + t) * ncin + c] = s.w[((size_t)outs[o] * kk + t) * cin + (*kept)[(size_t)c]];
    s.nb[o] = s.b[outs[o]];
  }
  *kept = outs;
}

void prune_depthwise(const PruneStep& s, std::vector<int>* kept) {
  const int kk = s.d.kernel_h * s.d.kernel_w, c = s.lp.in.c, nc = (int)kept->size();
  for (int t = 0; t < kk; ++t)
    for (int k = 0; k < nc; ++k) s.nw[(size_t)t * nc + k] = s.w[(size_t)t * c + (*kept)[(size_t)k]];
  for (int k = 0; k < nc; ++k) s.nb[k] = s.b[(*kept)[(size_t)k]];
}

void prune_dense(const PruneStep& s, std::vector<int>* kept) {
  const std::vector<int> cols = hwc_indices(s.lp.in.h, s.lp.in.w, s.lp.in.c, *kept);
  const size_t in_n = s.lp.in.size(), units = (size_t)s.lp.out.c;
  if (cols.size() != s.np.in.size()) throw Error("internal error: pruned dense columns do not match the plan.");
  for (size_t o = 0; o < units; ++o) {
    for (size_t j = 0; j < cols.size(); ++j) s.nw[o * cols.size() + j] = s.w[o * in_n + (size_t)cols[j]];
    s.nb[o] = s.b[o];
  }
  *kept = channel_range(s.lp.out.c);
}

// Flatten: the kept channels become the kept positions (y * W + x) * C + c.
void prune_flatten(const PruneStep& s, std::vector<int>* kept) {
  *kept = hwc_indices(s.lp.in.h, s.lp.in.w, s.lp.in.c, *kept);
}

// ---- .espdl emission (host/espdl/export_graph.h); each returns the last layer it consumed ----

// The row's ESP-DL operator.
const char* op_of(const ExportGraph& x, int i) {
  return tv::layer_info(x.plan_.desc.layers[i].type).espdl_op;
}

// Conv2D and DepthwiseConv2D: one Conv node with the weights in the S3 packing, a ReLU after it fused.
int espdl_conv(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  const tv::LayerPlan& lp = x.plan_.layers[i];
  const tv::Q8Model& q8 = *x.q8_;
  x.need_spatial(i);
  const bool relu_next = x.relu_next(i);
  const int last = relu_next ? i + 1 : i;
  const tv::Geom2D& geo = lp.geom;
  const bool dw = x.plan_.desc.layers[i].type == tv::LayerType::DepthwiseConv2D;
  const int e_w = q8.weight_exp[i];
  x.check_bias(i, lp.bias_count);
  EspdlNode n = x.node(op_of(x, i), x.base(i), last);
  const std::string wname = x.base(i) + ".weight", bname = x.base(i) + ".bias";
  const int8_t* w = q8.weights[i];
  if (dw) {
    const std::vector<int8_t> packed = ours_depthwise_filter_to_s3(w, geo.k_h, geo.k_w, geo.in_c);
    g.initializers.push_back(make_tensor(wname, {geo.k_h, geo.k_w, geo.in_c, 1}, espdl::TensorDataType_INT8,
                                         packed.data(), packed.size(), e_w, s3_filter_layout_doc(geo.in_c, false)));
  } else {
    const std::vector<int8_t> packed = ours_conv_filter_to_s3(w, geo.k_h, geo.k_w, geo.in_c, geo.out_c);
    g.initializers.push_back(make_tensor(wname, {geo.k_h, geo.k_w, geo.in_c, geo.out_c}, espdl::TensorDataType_INT8,
                                         packed.data(), packed.size(), e_w, s3_filter_layout_doc(geo.out_c, false)));
  }
  g.initializers.push_back(make_tensor(bname, {int64_t(lp.bias_count)}, espdl::TensorDataType_INT32, q8.biases[i],
                                       lp.bias_count, q8.act_exps[i] + e_w, "layout ==> UNK"));
  n.inputs = {x.cur_.name, wname, bname};
  const int pad_bottom = x.end_pad(i, geo.in_h, geo.k_h, geo.stride_h, geo.pad_top, geo.out_h);
  const int pad_right = x.end_pad(i, geo.in_w, geo.k_w, geo.stride_w, geo.pad_left, geo.out_w);
  n.attributes = {attr_string("activation", relu_next ? "Relu" : "Linear"),
                  attr_ints("dilations", {1, 1}),
                  attr_int("group", dw ? geo.in_c : 1),
                  attr_ints("kernel_shape", {geo.k_h, geo.k_w}),
                  attr_ints("pads", {geo.pad_top, geo.pad_left, pad_bottom, pad_right}),
                  attr_string("quant_type", "S8"),
                  attr_ints("strides", {geo.stride_h, geo.stride_w})};
  x.emit(g, std::move(n), {1, geo.out_h, geo.out_w, geo.out_c}, last,
         std::string(dw ? "Conv (depthwise, group " + std::to_string(geo.in_c) + ")" : "Conv") +
             (relu_next ? ", activation Relu" : ", activation Linear"),
         out);
  return last;
}

// Dense: a Gemm (transB 0), after a Flatten when its input is not flat yet; a ReLU after it fused.
int espdl_dense(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  const tv::LayerPlan& lp = x.plan_.layers[i];
  const tv::Q8Model& q8 = *x.q8_;
  const bool relu_next = x.relu_next(i);
  const int last = relu_next ? i + 1 : i;
  const int in_n = int(lp.in.size()), out_n = lp.out.c;
  if (x.cur_.dims.size() != 2) x.flatten(g, x.base(i) + "_flatten", i, out, true);
  if (int64_t(espdl_element_count(x.cur_.dims)) != in_n)
    x.refuse(i, "reads " + std::to_string(in_n) + " values but its input tensor is " + espdl_dims_text(x.cur_.dims));
  const int e_w = q8.weight_exp[i];
  x.check_bias(i, lp.bias_count);
  const std::string wname = x.base(i) + ".weight", bname = x.base(i) + ".bias";
  const std::vector<int8_t> packed = ours_conv_filter_to_s3(q8.weights[i], 1, 1, in_n, out_n);
  g.initializers.push_back(make_tensor(wname, {1, 1, in_n, out_n}, espdl::TensorDataType_INT8, packed.data(),
                                       packed.size(), e_w, s3_filter_layout_doc(out_n, false)));
  g.initializers.push_back(make_tensor(bname, {out_n}, espdl::TensorDataType_INT32, q8.biases[i], size_t(out_n),
                                       q8.act_exps[i] + e_w, "layout ==> UNK"));
  EspdlNode n = x.node(op_of(x, i), x.base(i), last);
  n.inputs = {x.cur_.name, wname, bname};
  n.attributes = {attr_string("activation", relu_next ? "Relu" : "Linear"), attr_float("alpha", 1.0f),
                  attr_float("beta", 1.0f), attr_string("quant_type", "S8"), attr_int("transB", 0)};
  x.emit(g, std::move(n), {1, out_n}, last,
         std::string("Gemm (transB 0") + (relu_next ? ", activation Relu)" : ", activation Linear)"), out);
  return last;
}

// MaxPool2D and AvgPool2D: their window.
int espdl_window_pool(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  x.need_spatial(i);
  const tv::Geom2D& geo = x.plan_.layers[i].geom;
  const bool avg = x.plan_.desc.layers[i].type == tv::LayerType::AvgPool2D;
  x.pool_node(g, i, avg, geo.k_h, geo.k_w, geo.stride_h, geo.stride_w, {1, geo.out_h, geo.out_w, geo.out_c}, out);
  return i;
}

// AdaptiveAvgPool2D: an AveragePool over equal bins (unequal ones are refused before: tv::equal_bins);
// 1 x 1 bins as a GlobalAveragePool (the GlobalAvgPool row's operator).
int espdl_adaptive_pool(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  const tv::LayerPlan& lp = x.plan_.layers[i];
  x.need_spatial(i);
  if (lp.out.h == 1 && lp.out.w == 1) {
    x.global_pool(g, i, out, "GlobalAveragePool (1 x 1 bins)");
    return i;
  }
  const int kh = lp.in.h / lp.out.h, kw = lp.in.w / lp.out.w;
  x.pool_node(g, i, true, kh, kw, kh, kw, {1, lp.out.h, lp.out.w, lp.out.c}, out);
  return i;
}

int espdl_global_pool(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  x.need_spatial(i);
  x.global_pool(g, i, out, op_of(x, i));
  return i;
}

int espdl_relu(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  EspdlNode n = x.node(op_of(x, i), x.base(i), i);
  n.inputs = {x.cur_.name};
  n.attributes = {attr_string("quant_type", "S8")};
  x.emit(g, std::move(n), x.cur_.dims, i, op_of(x, i), out);
  return i;
}

// A 256-entry table activation (esp-ppq's LUT representation): the row's operator with the bound int8
// engine's table (q8_bind built it) named by its "lut" attribute; `extra` attributes before it.
int espdl_lut(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out, std::vector<EspdlAttribute> extra,
              const std::string& what) {
  const char* op = op_of(x, i);
  const std::string table = x.lut_name(op);
  g.initializers.push_back(
      make_tensor(table, {256}, espdl::TensorDataType_INT8, x.q8_->luts[i], 256, x.q8_->act_exps[i + 1], ""));
  EspdlNode n = x.node(op, x.base(i), i);
  n.inputs = {x.cur_.name};
  n.attributes = std::move(extra);
  n.attributes.push_back(attr_string("lut", table));
  n.attributes.push_back(attr_string("quant_type", "S8"));
  x.emit(g, std::move(n), x.cur_.dims, i, std::string(op) + " (" + what + "256-entry table " + table + ")", out);
  return i;
}

// A table activation without attributes of its own (HardSwish).
int espdl_table(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  return espdl_lut(x, g, i, out, {}, "");
}

int espdl_leaky_relu(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  const float alpha = x.plan_.desc.layers[i].alpha;
  return espdl_lut(x, g, i, out, {attr_float("alpha", alpha)}, "alpha " + fmt_float(alpha) + ", ");
}

// The clamp at [quantize(lo), quantize(hi)] of q8_run, as a table (esp-ppq exports Clip as a LUT)
// with ONNX's min/max inputs beside it (ESP-DL's Clip module reads them when there is no table).
int espdl_clip(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  const tv::LayerDesc& d = x.plan_.desc.layers[i];
  const int e_in = x.q8_->act_exps[i];
  const int8_t lo = tv::quantize_one_s8(d.lo, e_in), hi = tv::quantize_one_s8(d.hi, e_in);
  if (lo == -128 && hi == 127) {  // the clamp holds all of int8 at this exponent: nothing to run
    out.mapping.push_back(x.base(i) + " -> (nothing: [" + fmt_float(d.lo) + ", " + fmt_float(d.hi) +
                          "] covers every int8 value at exponent " + std::to_string(e_in) + ")");
    return i;
  }
  int8_t lut[256];
  for (int q = -128; q < 128; ++q) lut[q + 128] = int8_t(q < lo ? lo : (q > hi ? hi : q));
  const std::string table = x.lut_name(op_of(x, i));
  const std::string mn = x.base(i) + ".min", mx = x.base(i) + ".max";
  g.initializers.push_back(make_tensor(mn, {1}, espdl::TensorDataType_INT8, &lo, 1, e_in, "layout ==> UNK"));
  g.initializers.push_back(make_tensor(mx, {1}, espdl::TensorDataType_INT8, &hi, 1, e_in, "layout ==> UNK"));
  g.initializers.push_back(make_tensor(table, {256}, espdl::TensorDataType_INT8, lut, 256, e_in, ""));
  EspdlNode n = x.node(op_of(x, i), x.base(i), i);
  n.inputs = {x.cur_.name, mn, mx};
  n.attributes = {attr_string("lut", table), attr_string("quant_type", "S8")};
  x.emit(g, std::move(n), x.cur_.dims, i,
         "Clip (min " + std::to_string(lo) + ", max " + std::to_string(hi) + " at exponent " + std::to_string(e_in) +
             ", 256-entry table " + table + ")",
         out);
  return i;
}

// Flatten: folded away (no node) when its input is already flat.
int espdl_flatten(ExportGraph& x, EspdlModel& g, int i, EspdlExport& out) {
  if (x.cur_.dims.size() == 2) {
    out.mapping.push_back(x.base(i) + " -> (nothing: its input is already flat)");
    return i;
  }
  x.flatten(g, x.base(i), i, out, false);
  return i;
}

using T = tv::LayerType;

// One row per type, in enumerator order.
constexpr HostLayer kHostLayers[] = {
    {T::Conv2D, config_conv2d, prune_conv2d, espdl_conv},
    {T::DepthwiseConv2D, config_depthwise, prune_depthwise, espdl_conv},
    {T::MaxPool2D, config_maxpool, prune_keeps_channels, espdl_window_pool},
    {T::AvgPool2D, config_avgpool, prune_keeps_channels, espdl_window_pool},
    {T::AdaptiveAvgPool2D, config_adaptive_avgpool, prune_keeps_channels, espdl_adaptive_pool},
    {T::GlobalAvgPool, config_no_fields<T::GlobalAvgPool>, prune_keeps_channels, espdl_global_pool},
    {T::Dense, config_dense, prune_dense, espdl_dense},
    {T::ReLU, config_no_fields<T::ReLU>, prune_keeps_channels, espdl_relu},
    {T::LeakyReLU, config_leaky_relu, prune_keeps_channels, espdl_leaky_relu},
    {T::Flatten, config_no_fields<T::Flatten>, prune_flatten, espdl_flatten},
    {T::Clip, config_clip, prune_keeps_channels, espdl_clip},
    {T::Hardswish, config_no_fields<T::Hardswish>, prune_keeps_channels, espdl_table},
};

constexpr int kRows = (int)(sizeof(kHostLayers) / sizeof(kHostLayers[0]));
static_assert(kRows == tv::kLayerTypeCount, "every LayerType needs exactly one row in kHostLayers");

constexpr bool rows_in_enum_order() {
  for (int i = 0; i < kRows; ++i)
    if ((int)kHostLayers[i].type != i + 1) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kHostLayers rows must follow LayerType's numbering (row i is type i + 1)");

}  // namespace

const HostLayer& host_layer(tv::LayerType type) {
  const int i = (int)type - 1;
  if (i < 0 || i >= kRows) throw Error("internal error: no host row for layer type " + std::to_string(i + 1) + ".");
  return kHostLayers[i];
}

}  // namespace tvh
