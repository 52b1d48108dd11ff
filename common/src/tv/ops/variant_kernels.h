// The float kernels with a reference and a fast variant, each signature written once, here:
//   TV_VARIANT_KERNEL(name, (parameters), (the parameters' names, to pass them on))
// The includer defines TV_VARIANT_KERNEL and includes this file inside a namespace (no include guard):
// tv/ops/ops.h declares the tv:: entry points from it, ops/kernel_variants.h declares tv::ref:: and
// tv::fast::, ops/dispatch.cpp defines the entry points (each calls the variant the build chose).
// Every kernel returns void. Conventions (layouts, overwrite or accumulate): tv/ops/ops.h.
#ifndef TV_VARIANT_KERNEL
#error "define TV_VARIANT_KERNEL(name, params, args) before including tv/ops/variant_kernels.h"
#endif

// clang-format off

// ---- Conv2D (conv2d.cpp) ----
// out[oy][ox][o] = b[o] + sum_{ky,kx,i} in[iy][ix][i] * w[o][ky][kx][i]
TV_VARIANT_KERNEL(conv2d_forward, (const Geom2D& g, const float* in, const float* w, const float* b, float* out),
                  (g, in, w, b, out))
// din = dL/din given dout = dL/dout (overwrites din, g.in_h*g.in_w*g.in_c floats).
TV_VARIANT_KERNEL(conv2d_backward_data, (const Geom2D& g, const float* w, const float* dout, float* din),
                  (g, w, dout, din))
// dw += dL/dw, db += dL/db.
TV_VARIANT_KERNEL(conv2d_backward_params,
                  (const Geom2D& g, const float* in, const float* dout, float* dw, float* db), (g, in, dout, dw, db))

// ---- DepthwiseConv2D (depthwise_conv2d.cpp), channel multiplier 1, out_c == in_c ----
TV_VARIANT_KERNEL(depthwise_conv2d_forward,
                  (const Geom2D& g, const float* in, const float* w, const float* b, float* out), (g, in, w, b, out))
TV_VARIANT_KERNEL(depthwise_conv2d_backward_data, (const Geom2D& g, const float* w, const float* dout, float* din),
                  (g, w, dout, din))
TV_VARIANT_KERNEL(depthwise_conv2d_backward_params,
                  (const Geom2D& g, const float* in, const float* dout, float* dw, float* db), (g, in, dout, dw, db))

// ---- MaxPool2D (maxpool2d.cpp), out_c == in_c, padded cells are skipped ----
TV_VARIANT_KERNEL(maxpool2d_forward, (const Geom2D& g, const float* in, float* out), (g, in, out))
// Routes each dout to the FIRST maximum of its window in row-major (ky, kx) order, found again from
// `in`; overlapping windows add up. Overwrites din.
TV_VARIANT_KERNEL(maxpool2d_backward, (const Geom2D& g, const float* in, const float* dout, float* din),
                  (g, in, dout, din))

// ---- AvgPool2D (avgpool2d.cpp), out_c == in_c; divides by the full window area k_h*k_w ----
TV_VARIANT_KERNEL(avgpool2d_forward, (const Geom2D& g, const float* in, float* out), (g, in, out))
// Overwrites din.
TV_VARIANT_KERNEL(avgpool2d_backward, (const Geom2D& g, const float* dout, float* din), (g, dout, din))

// ---- AdaptiveAvgPool2D (adaptive_avgpool2d.cpp); GlobalAvgPool is out_h = out_w = 1 ----
// Bin (oy, ox) averages input rows [floor(oy*in_h/out_h), ceil((oy+1)*in_h/out_h)) and likewise
// columns (the PyTorch rule).
TV_VARIANT_KERNEL(adaptive_avgpool2d_forward,
                  (int in_h, int in_w, int c, int out_h, int out_w, const float* in, float* out),
                  (in_h, in_w, c, out_h, out_w, in, out))
// Overwrites din.
TV_VARIANT_KERNEL(adaptive_avgpool2d_backward,
                  (int in_h, int in_w, int c, int out_h, int out_w, const float* dout, float* din),
                  (in_h, in_w, c, out_h, out_w, dout, din))

// ---- Dense (dense.cpp): out[o] = b[o] + sum_i w[o][i] * in[i], summed in float in input order ----
TV_VARIANT_KERNEL(dense_forward, (int in_n, int out_n, const float* in, const float* w, const float* b, float* out),
                  (in_n, out_n, in, w, b, out))
TV_VARIANT_KERNEL(dense_backward_data, (int in_n, int out_n, const float* w, const float* dout, float* din),
                  (in_n, out_n, w, dout, din))
TV_VARIANT_KERNEL(dense_backward_params,
                  (int in_n, int out_n, const float* in, const float* dout, float* dw, float* db),
                  (in_n, out_n, in, dout, dw, db))

// ---- Activations, in place (activations.cpp) ----
TV_VARIANT_KERNEL(relu_forward, (float* x, size_t n), (x, n))
// dy *= (y > 0)
TV_VARIANT_KERNEL(relu_backward, (const float* y, float* dy, size_t n), (y, dy, n))
// x = x > 0 ? x : alpha * x
TV_VARIANT_KERNEL(leaky_relu_forward, (float* x, size_t n, float alpha), (x, n, alpha))
// dy *= y > 0 ? 1 : alpha
TV_VARIANT_KERNEL(leaky_relu_backward, (const float* y, float* dy, size_t n, float alpha), (y, dy, n, alpha))
// A layer and the ReLU beside it, the same bits as the two one by one (the fast kernels apply the
// ReLU while the layer's output is still in the cache; the reference runs them one after the other).
// Forward: the layer, then relu_forward(out). Backward: the layer's backward_data, then
// relu_backward(y, din) for the ReLU before it (y: its output, the layer's input; `in` for max-pool).
TV_VARIANT_KERNEL(conv2d_forward_relu, (const Geom2D& g, const float* in, const float* w, const float* b, float* out),
                  (g, in, w, b, out))
TV_VARIANT_KERNEL(depthwise_conv2d_forward_relu,
                  (const Geom2D& g, const float* in, const float* w, const float* b, float* out), (g, in, w, b, out))
TV_VARIANT_KERNEL(conv2d_backward_data_relu,
                  (const Geom2D& g, const float* w, const float* dout, float* din, const float* y),
                  (g, w, dout, din, y))
TV_VARIANT_KERNEL(depthwise_conv2d_backward_data_relu,
                  (const Geom2D& g, const float* w, const float* dout, float* din, const float* y),
                  (g, w, dout, din, y))
TV_VARIANT_KERNEL(maxpool2d_backward_relu, (const Geom2D& g, const float* in, const float* dout, float* din),
                  (g, in, dout, din))
// Clamp to [lo, hi]; its gradient passes straight through (as the reference firmware does), so it
// has no backward.
TV_VARIANT_KERNEL(clip_forward, (float* x, size_t n, float lo, float hi), (x, n, lo, hi))

// clang-format on
