// The one sliding-window helper the float and int8 window kernels share.
#pragma once

namespace tv {

// The kernel taps [begin, end) of one axis that land inside the input for output coordinate `o`
// (empty when the window lies wholly in the padding).
struct TapRange {
  int begin, end;
};

inline TapRange valid_taps(int o, int stride, int pad, int k, int in_size) {
  const int origin = o * stride - pad;  // input coordinate of tap 0
  TapRange r;
  r.begin = origin < 0 ? -origin : 0;
  r.end = in_size - origin < k ? in_size - origin : k;
  if (r.end < r.begin) r.end = r.begin;
  if (r.begin > k) r.begin = r.end = k;
  return r;
}

}  // namespace tv
