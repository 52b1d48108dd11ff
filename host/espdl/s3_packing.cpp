// ESP-DL's filter layouts: the S3 packing of conv, depthwise and Gemm filters (blocks of 16 output
// channels, then the remainder) to and from our layouts, and the filter of a Conv/Gemm node.
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/espdl/espdl.h"

namespace tvh {
// ---------------------------------------------------------------- filter layouts

EspdlFilterLayout espdl_filter_layout(const EspdlTensor& filter, const std::string& source) {
  std::string layout = filter.doc;
  const std::string prefix = "layout ==> ";
  if (layout.compare(0, prefix.size(), prefix) == 0) layout = layout.substr(prefix.size());
  if (layout.find("(N/16)") == 0 || layout.find("N16") == 0) return EspdlFilterLayout::S3Packed;
  if (layout == "NHWC" || layout == "NWC" || layout == "HWCN" || layout == "WCN") return EspdlFilterLayout::Ours;
  if (layout.find("(N/8)") == 0 || layout.find("N8") == 0)
    espdl_fail(source, "filter '" + filter.name + "' uses the int16 layout '" + layout +
                           "', which is not supported (int8 only)");
  espdl_fail(source, "filter '" + filter.name + "' has an unknown layout '" + filter.doc + "'");
}

namespace {

// Where each byte of an S3-packed filter comes from in ours: order[i] is the index in our layout of
// packed byte i. Conv (ours [cout][taps][cin]): blocks of 16 output channels, each taps x cin x 16,
// then the remaining output channels one by one. Depthwise (ours [taps][c]): blocks of 16 channels,
// each taps x 16, then taps x the remaining channels.
std::vector<size_t> s3_conv_order(int kh, int kw, int cin, int cout) {
  const size_t taps = size_t(kh) * kw;
  std::vector<size_t> order;
  order.reserve(taps * cin * cout);
  const int blocks = cout / 16;
  for (int b = 0; b < blocks; ++b)
    for (size_t t = 0; t < taps; ++t)
      for (int c = 0; c < cin; ++c)
        for (int j = 0; j < 16; ++j) order.push_back(((size_t(b) * 16 + j) * taps + t) * cin + c);
  for (int n = blocks * 16; n < cout; ++n)
    for (size_t t = 0; t < taps; ++t)
      for (int c = 0; c < cin; ++c) order.push_back((size_t(n) * taps + t) * cin + c);
  return order;
}

std::vector<size_t> s3_depthwise_order(int kh, int kw, int c) {
  const size_t taps = size_t(kh) * kw;
  std::vector<size_t> order;
  order.reserve(taps * c);
  const int blocks = c / 16, rem = c % 16;
  for (int b = 0; b < blocks; ++b)
    for (size_t t = 0; t < taps; ++t)
      for (int j = 0; j < 16; ++j) order.push_back(t * c + size_t(b) * 16 + j);
  for (size_t t = 0; t < taps; ++t)
    for (int j = 0; j < rem; ++j) order.push_back(t * c + size_t(blocks) * 16 + j);
  return order;
}

std::vector<int8_t> unpack(const int8_t* packed, const std::vector<size_t>& order) {
  std::vector<int8_t> ours(order.size());
  for (size_t i = 0; i < order.size(); ++i) ours[order[i]] = packed[i];
  return ours;
}

std::vector<int8_t> pack(const int8_t* ours, const std::vector<size_t>& order) {
  std::vector<int8_t> packed(order.size());
  for (size_t i = 0; i < order.size(); ++i) packed[i] = ours[order[i]];
  return packed;
}

}  // namespace

std::vector<int8_t> s3_conv_filter_to_ours(const int8_t* packed, int kh, int kw, int cin, int cout) {
  return unpack(packed, s3_conv_order(kh, kw, cin, cout));
}

std::vector<int8_t> ours_conv_filter_to_s3(const int8_t* ours, int kh, int kw, int cin, int cout) {
  return pack(ours, s3_conv_order(kh, kw, cin, cout));
}

std::vector<int8_t> s3_depthwise_filter_to_ours(const int8_t* packed, int kh, int kw, int c) {
  return unpack(packed, s3_depthwise_order(kh, kw, c));
}

std::vector<int8_t> ours_depthwise_filter_to_s3(const int8_t* ours, int kh, int kw, int c) {
  return pack(ours, s3_depthwise_order(kh, kw, c));
}

std::string s3_filter_layout_doc(int cout, bool one_dimensional) {
  std::string s = one_dimensional ? "layout ==> (N/16)WC16" : "layout ==> (N/16)HWC16";
  if (cout % 16 != 0) s += "_UNALIGNED";
  return s;
}

EspdlFilter espdl_node_filter(const EspdlModel& model, const EspdlNode& node) {
  const std::string where = "node '" + node.name + "' (" + node.op_type + ")";
  if (node.inputs.size() < 2) espdl_fail(model.source, where + " has no filter input");
  const EspdlTensor* w = model.find_initializer(node.inputs[1]);
  if (!w) espdl_fail(model.source, where + " reads its filter '" + node.inputs[1] + "' from a non-constant");
  if (w->dtype != espdl::TensorDataType_INT8)
    espdl_fail(model.source, where + " has a " + espdl_dtype_name(w->dtype) + " filter; only INT8 is supported");
  if (w->exponents.size() != 1)
    espdl_fail(model.source, where + " has " + std::to_string(w->exponents.size()) +
                                 " filter exponents; only per-tensor (one) is supported");
  const EspdlFilterLayout layout = espdl_filter_layout(*w, model.source);
  const std::vector<int8_t> raw = w->as_int8();
  const std::vector<int64_t>& d = w->dims;
  auto dim_ok = [](int64_t v) { return v > 0 && v <= (int64_t(1) << 24); };
  for (int64_t v : d)
    if (!dim_ok(v)) espdl_fail(model.source, where + " has filter dims " + espdl_dims_text(d));

  EspdlFilter f;
  f.exponent = w->exponent();
  if (node.op_type == "Gemm") {
    if (node.attr_int("transB", 0) != 0) espdl_fail(model.source, where + " has transB = 1, which is not supported");
    if (d.size() != 4 || d[0] != 1 || d[1] != 1)
      espdl_fail(model.source, where + " has filter dims " + espdl_dims_text(d) + ", not [1, 1, in, out]");
    f.cin = int(d[2]);
    f.cout = int(d[3]);
  } else if (node.op_type == "Conv") {
    const int64_t group = node.attr_int("group", 1);
    if (d.size() != 3 && d.size() != 4)
      espdl_fail(model.source, where + " has filter dims " + espdl_dims_text(d) + " (neither 1-D nor 2-D)");
    const size_t o = d.size() == 4 ? 1 : 0;  // offset of kw
    f.kh = d.size() == 4 ? int(d[0]) : 1;
    f.kw = int(d[o]);
    if (group == 1) {
      f.cin = int(d[o + 1]);
      f.cout = int(d[o + 2]);
    } else {
      if (d[o + 2] != 1 || d[o + 1] != group)
        espdl_fail(model.source, where + " is a grouped conv (group " + std::to_string(group) + ", filter " +
                                     espdl_dims_text(d) + "); only depthwise (group = channels) is supported");
      f.depthwise = true;
      f.cin = f.cout = int(group);
    }
  } else {
    espdl_fail(model.source, where + " has no filter (only Conv and Gemm do)");
  }
  if (layout == EspdlFilterLayout::Ours)
    f.weights = raw;
  else if (f.depthwise)
    f.weights = s3_depthwise_filter_to_ours(raw.data(), f.kh, f.kw, f.cin);
  else
    f.weights = s3_conv_filter_to_ours(raw.data(), f.kh, f.kw, f.cin, f.cout);
  return f;
}

}  // namespace tvh
