#include "host/s3_limits.h"

#include <algorithm>
#include <string>

#include "host/error.h"
#include "tv/int8/int8_ops.h"

namespace tvh {

Int8Interval input_interval(const tv::InputDesc& in, int e0) {
  const int64_t q0 = tv::quantize_one_s8(0.0f * in.scale + in.offset, e0);
  const int64_t q255 = tv::quantize_one_s8(255.0f * in.scale + in.offset, e0);
  return Int8Interval{std::min(q0, q255), std::max(q0, q255)};
}

Int8Interval parameterless_interval(const tv::LayerDesc& d, int e_in, int e_out, const Int8Interval& in) {
  Int8Interval out = in;
  switch (d.type) {
    case tv::LayerType::ReLU:
      out.lo = std::max<int64_t>(in.lo, 0);
      out.hi = std::max<int64_t>(in.hi, 0);
      break;
    case tv::LayerType::Clip: {
      const int64_t lo = tv::quantize_one_s8(d.lo, e_in), hi = tv::quantize_one_s8(d.hi, e_in);
      out.lo = std::max(lo, std::min(hi, in.lo));
      out.hi = std::max(lo, std::min(hi, in.hi));
      break;
    }
    case tv::LayerType::LeakyReLU: {  // the table's values over the reachable inputs
      int8_t table[256];
      tv::leaky_relu_table_s8(d.alpha, e_in, e_out, table);
      out = Int8Interval{127, -128};
      for (int64_t v = in.lo; v <= in.hi; ++v) {
        out.lo = std::min<int64_t>(out.lo, table[v + 128]);
        out.hi = std::max<int64_t>(out.hi, table[v + 128]);
      }
      break;
    }
    case tv::LayerType::AvgPool2D:
    case tv::LayerType::AdaptiveAvgPool2D:
    case tv::LayerType::GlobalAvgPool: {
      // An average stays inside [lo, hi] and its rounding is monotonic: the extremes are the
      // averages of windows full of lo or of hi, i.e. lo and hi rescaled to e_out.
      int8_t v[2] = {int8_t(in.lo), int8_t(in.hi)};
      tv::rescale_s8(v, 2, e_in, e_out, v);
      out.lo = v[0];
      out.hi = v[1];
      break;
    }
    case tv::LayerType::MaxPool2D:
    case tv::LayerType::Flatten: break;  // a subset of the input's values
    case tv::LayerType::Conv2D:
    case tv::LayerType::DepthwiseConv2D:
    case tv::LayerType::Dense:
      throw Error(std::string("internal error: the output interval of a ") + tv::layer_type_name(d.type) +
                  " layer needs its weights.");
  }
  return out;
}

}  // namespace tvh
