// Int8 Dense (ONNX Gemm): weights [out][in], int32 bias, requantised output.
#include "tv/int8/int8_ops.h"
#include "tv/int8/int8_window.h"

namespace tv {

Status dense_s8(int in_n, int out_n, const int8_t* in, const int8_t* w, const int32_t* bias, const Q8Layer& q,
                int8_t* out) {
  int s = 0;
  const Status rs = int8_detail::check_requant(in, w, out, q, &s);
  if (!rs.ok()) return rs;
  if (in_n <= 0 || out_n <= 0) return status_value(StatusCode::ZeroDimension, -1, in_n <= 0 ? in_n : out_n);
  if (in_n > kInt8MaxFanIn) return status_over_limit(StatusCode::InvalidArgument, -1, in_n, (int32_t)kInt8MaxFanIn);
  for (int o = 0; o < out_n; ++o) {
    const int8_t* row = w + (size_t)o * in_n;
    int32_t acc = 0;
    for (int i = 0; i < in_n; ++i) acc += (int32_t)in[i] * (int32_t)row[i];
    out[o] = int8_detail::requant_output(acc, bias, o, s, q.relu);
  }
  return ok_status();
}

}  // namespace tv
