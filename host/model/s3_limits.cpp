#include "host/model/s3_limits.h"

#include <algorithm>
#include <string>

#include "host/base/error.h"
#include "tv/int8/int8_ops.h"
#include "tv/model/layer_unit.h"

namespace tvh {

Int8Interval input_interval(const tv::InputDesc& in, int e0) {
  const int64_t q0 = tv::quantize_one_s8(0.0f * in.scale + in.offset, e0);
  const int64_t q255 = tv::quantize_one_s8(255.0f * in.scale + in.offset, e0);
  return Int8Interval{std::min(q0, q255), std::max(q0, q255)};
}

Int8Interval parameterless_interval(const tv::LayerDesc& d, int e_in, int e_out, const Int8Interval& in) {
  const tv::Int8Range r{(int32_t)in.lo, (int32_t)in.hi};
  tv::Int8Range out;
  if (!tv::layer_unit(d.type).int8.interval(d, e_in, e_out, r, &out))
    throw Error(std::string("internal error: the output interval of a ") + tv::layer_type_name(d.type) +
                " layer needs its weights.");
  return Int8Interval{out.lo, out.hi};
}

}  // namespace tvh
