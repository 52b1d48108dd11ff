// tv_bench_kernels: the time of every kernel of a preset's network, layer by layer, fast variants
// (tv::fast::) against the reference kernels (tv::ref::), one thread, on random data shaped as in
// training (gradients with the zeros a ReLU leaves). Shows where a training step's time goes.
//
//   tv_bench_kernels [--preset NAME] [--input HxWxC] [--classes N] [--reps N]
//
// Prints, per layer and phase (forward, input gradient, weight gradient), microseconds per sample
// for both sets, the speed-up and, for layers with weights, GFLOP/s (2 flops per multiply-add).
// Prints figures only.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "tv/model.h"
#include "tv/ops/kernel_variants.h"
#include "tv/presets.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Buffers {
  std::vector<float> in, out, w, b, dout, din, dw, db;
};

std::vector<float> random_floats(std::mt19937& rng, size_t n, float zero_fraction) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f), coin(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = coin(rng) < zero_fraction ? 0.0f : value(rng);
  return v;
}

// Median of 5 timings of reps calls, in microseconds per call.
template <class F>
double time_us(int reps, F&& f) {
  std::vector<double> t;
  for (int k = 0; k < 5; ++k) {
    const auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) f();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

struct Row {
  double ref_us = -1, fast_us = -1, macs = 0;  // -1: not timed
};

// The three kernels of a layer with weights over a sliding window (conv2d and depthwise share them).
struct WindowOps {
  void (*forward)(const tv::Geom2D&, const float*, const float*, const float*, float*);
  void (*backward_data)(const tv::Geom2D&, const float*, const float*, float*);
  void (*backward_params)(const tv::Geom2D&, const float*, const float*, float*, float*);
};

void time_window_layer(int reps, const tv::Geom2D& g, Buffers& bf, const WindowOps& ref, const WindowOps& fast,
                       Row* fwd, Row* bdata, Row* bparams) {
  const WindowOps* sets[2] = {&ref, &fast};
  for (int k = 0; k < 2; ++k) {
    const WindowOps& op = *sets[k];
    const double f = time_us(reps, [&] { op.forward(g, bf.in.data(), bf.w.data(), bf.b.data(), bf.out.data()); });
    const double d = time_us(reps, [&] { op.backward_data(g, bf.w.data(), bf.dout.data(), bf.din.data()); });
    const double p =
        time_us(reps, [&] { op.backward_params(g, bf.in.data(), bf.dout.data(), bf.dw.data(), bf.db.data()); });
    (k ? fwd->fast_us : fwd->ref_us) = f;
    (k ? bdata->fast_us : bdata->ref_us) = d;
    (k ? bparams->fast_us : bparams->ref_us) = p;
  }
}

void print_row(const char* layer, const char* phase, const Row& r, double* total_ref, double* total_fast) {
  *total_ref += r.ref_us;
  *total_fast += r.fast_us;
  printf("%-28s %-8s %9.2f %9.2f %6.1fx", layer, phase, r.ref_us, r.fast_us, r.ref_us / r.fast_us);
  if (r.macs > 0) printf(" %7.1f", 2.0 * r.macs / (r.fast_us * 1e3));
  printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "tinyvision";
  tv::DataShape data;
  int classes = 3, reps = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--preset" && i + 1 < argc) {
      preset = argv[++i];
    } else if (a == "--input" && i + 1 < argc) {
      if (sscanf(argv[++i], "%dx%dx%d", &data.height, &data.width, &data.channels) != 3) {
        fprintf(stderr, "tv_bench_kernels: --input takes HxWxC, e.g. 64x64x3\n");
        return 2;
      }
    } else if (a == "--classes" && i + 1 < argc) {
      classes = atoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: tv_bench_kernels [--preset NAME] [--input HxWxC] [--classes N] [--reps N]\n");
      return 2;
    }
  }
  data.images = 100;
  tv::ModelDesc desc;
  tv::ModelPlan plan;
  if (!tv::preset_model_for(preset.c_str(), classes, data, &desc) || !tv::plan_model(desc, &plan).ok()) {
    fprintf(stderr, "tv_bench_kernels: no network for preset '%s' at %dx%dx%d\n", preset.c_str(), data.height,
            data.width, data.channels);
    return 2;
  }
  printf("preset %s, input %dx%dx%d, %d classes; microseconds per sample, median of 5 x %d calls\n", preset.c_str(),
         data.height, data.width, data.channels, classes, reps);
  printf("%-28s %-8s %9s %9s %7s %7s\n", "layer", "phase", "ref us", "fast us", "speedup", "GFLOP/s");
  std::mt19937 rng(1);
  double total_ref = 0, total_fast = 0;
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    const tv::LayerPlan& lp = plan.layers[i];
    const tv::Geom2D& g = lp.geom;
    const size_t n_in = lp.in.size(), n_out = lp.out.size();
    Buffers bf;
    bf.in = random_floats(rng, n_in, 0.5f);  // about half zero, as after a ReLU
    bf.out.assign(n_out, 0.0f);
    bf.dout = random_floats(rng, n_out, 0.5f);
    bf.din.assign(n_in, 0.0f);
    bf.w = random_floats(rng, lp.weight_count, 0.0f);
    bf.b = random_floats(rng, lp.bias_count, 0.0f);
    bf.dw.assign(lp.weight_count, 0.0f);
    bf.db.assign(lp.bias_count, 0.0f);
    char name[64];
    snprintf(name, sizeof name, "%2d %s %dx%dx%d", i, tv::layer_type_name(d.type), lp.out.h, lp.out.w, lp.out.c);
    const bool need_dx = i > plan.first_param_layer;
    Row fwd, bdata, bparams;
    switch (d.type) {
      case tv::LayerType::Conv2D:
        time_window_layer(
            reps, g, bf,
            WindowOps{tv::ref::conv2d_forward, tv::ref::conv2d_backward_data, tv::ref::conv2d_backward_params},
            WindowOps{tv::fast::conv2d_forward, tv::fast::conv2d_backward_data, tv::fast::conv2d_backward_params}, &fwd,
            &bdata, &bparams);
        fwd.macs = bdata.macs = bparams.macs = (double)lp.weight_count * lp.out.h * lp.out.w;
        break;
      case tv::LayerType::DepthwiseConv2D:
        time_window_layer(reps, g, bf,
                          WindowOps{tv::ref::depthwise_conv2d_forward, tv::ref::depthwise_conv2d_backward_data,
                                    tv::ref::depthwise_conv2d_backward_params},
                          WindowOps{tv::fast::depthwise_conv2d_forward, tv::fast::depthwise_conv2d_backward_data,
                                    tv::fast::depthwise_conv2d_backward_params},
                          &fwd, &bdata, &bparams);
        fwd.macs = bdata.macs = bparams.macs = (double)lp.weight_count * lp.out.h * lp.out.w;
        break;
      case tv::LayerType::Dense: {
        const int in_n = (int)n_in, out_n = lp.out.c;
        fwd.macs = bdata.macs = bparams.macs = (double)in_n * out_n;
        fwd.ref_us = time_us(
            reps, [&] { tv::ref::dense_forward(in_n, out_n, bf.in.data(), bf.w.data(), bf.b.data(), bf.out.data()); });
        fwd.fast_us = time_us(
            reps, [&] { tv::fast::dense_forward(in_n, out_n, bf.in.data(), bf.w.data(), bf.b.data(), bf.out.data()); });
        bdata.ref_us = time_us(
            reps, [&] { tv::ref::dense_backward_data(in_n, out_n, bf.w.data(), bf.dout.data(), bf.din.data()); });
        bdata.fast_us = time_us(
            reps, [&] { tv::fast::dense_backward_data(in_n, out_n, bf.w.data(), bf.dout.data(), bf.din.data()); });
        bparams.ref_us = time_us(reps, [&] {
          tv::ref::dense_backward_params(in_n, out_n, bf.in.data(), bf.dout.data(), bf.dw.data(), bf.db.data());
        });
        bparams.fast_us = time_us(reps, [&] {
          tv::fast::dense_backward_params(in_n, out_n, bf.in.data(), bf.dout.data(), bf.dw.data(), bf.db.data());
        });
        break;
      }
      case tv::LayerType::MaxPool2D:
        fwd.ref_us = time_us(reps, [&] { tv::ref::maxpool2d_forward(g, bf.in.data(), bf.out.data()); });
        fwd.fast_us = time_us(reps, [&] { tv::fast::maxpool2d_forward(g, bf.in.data(), bf.out.data()); });
        bdata.ref_us =
            time_us(reps, [&] { tv::ref::maxpool2d_backward(g, bf.in.data(), bf.dout.data(), bf.din.data()); });
        bdata.fast_us =
            time_us(reps, [&] { tv::fast::maxpool2d_backward(g, bf.in.data(), bf.dout.data(), bf.din.data()); });
        break;
      case tv::LayerType::AvgPool2D:
        fwd.ref_us = time_us(reps, [&] { tv::ref::avgpool2d_forward(g, bf.in.data(), bf.out.data()); });
        fwd.fast_us = time_us(reps, [&] { tv::fast::avgpool2d_forward(g, bf.in.data(), bf.out.data()); });
        bdata.ref_us = time_us(reps, [&] { tv::ref::avgpool2d_backward(g, bf.dout.data(), bf.din.data()); });
        bdata.fast_us = time_us(reps, [&] { tv::fast::avgpool2d_backward(g, bf.dout.data(), bf.din.data()); });
        break;
      case tv::LayerType::AdaptiveAvgPool2D:
      case tv::LayerType::GlobalAvgPool: {
        const tv::Shape& a = lp.in;
        const tv::Shape& o = lp.out;
        fwd.ref_us = time_us(
            reps, [&] { tv::ref::adaptive_avgpool2d_forward(a.h, a.w, a.c, o.h, o.w, bf.in.data(), bf.out.data()); });
        fwd.fast_us = time_us(
            reps, [&] { tv::fast::adaptive_avgpool2d_forward(a.h, a.w, a.c, o.h, o.w, bf.in.data(), bf.out.data()); });
        bdata.ref_us = time_us(reps, [&] {
          tv::ref::adaptive_avgpool2d_backward(a.h, a.w, a.c, o.h, o.w, bf.dout.data(), bf.din.data());
        });
        bdata.fast_us = time_us(reps, [&] {
          tv::fast::adaptive_avgpool2d_backward(a.h, a.w, a.c, o.h, o.w, bf.dout.data(), bf.din.data());
        });
        break;
      }
      case tv::LayerType::ReLU:
      case tv::LayerType::LeakyReLU:
      case tv::LayerType::Clip: {
        // In place: each call works on a fresh copy of the same data (repeated LeakyReLU would
        // shrink it to denormals); the copy's own time is subtracted.
        const std::vector<float> x = bf.dout;
        const float alpha = d.alpha, lo = d.lo, hi = d.hi;
        const tv::LayerType t = d.type;
        const double copy_us = time_us(reps, [&] { std::copy(x.begin(), x.end(), bf.out.begin()); });
        auto forward = [&](bool fast) {
          return time_us(reps,
                         [&] {
                           std::copy(x.begin(), x.end(), bf.out.begin());
                           float* v = bf.out.data();
                           if (t == tv::LayerType::ReLU)
                             fast ? tv::fast::relu_forward(v, n_out) : tv::ref::relu_forward(v, n_out);
                           else if (t == tv::LayerType::LeakyReLU)
                             fast ? tv::fast::leaky_relu_forward(v, n_out, alpha)
                                  : tv::ref::leaky_relu_forward(v, n_out, alpha);
                           else
                             fast ? tv::fast::clip_forward(v, n_out, lo, hi) : tv::ref::clip_forward(v, n_out, lo, hi);
                         }) -
                 copy_us;
        };
        fwd.ref_us = forward(false);
        fwd.fast_us = forward(true);
        auto backward = [&](bool fast) {
          return time_us(reps,
                         [&] {
                           std::copy(x.begin(), x.end(), bf.out.begin());
                           float* dy = bf.out.data();
                           if (t == tv::LayerType::ReLU)
                             fast ? tv::fast::relu_backward(bf.in.data(), dy, n_out)
                                  : tv::ref::relu_backward(bf.in.data(), dy, n_out);
                           else
                             fast ? tv::fast::leaky_relu_backward(bf.in.data(), dy, n_out, alpha)
                                  : tv::ref::leaky_relu_backward(bf.in.data(), dy, n_out, alpha);
                         }) -
                 copy_us;
        };
        if (t != tv::LayerType::Clip) {  // Clip passes the gradient through untouched
          bdata.ref_us = backward(false);
          bdata.fast_us = backward(true);
        }
        break;
      }
      case tv::LayerType::Flatten: continue;
    }
    print_row(name, "forward", fwd, &total_ref, &total_fast);
    if (bdata.fast_us != -1 && need_dx) print_row(name, "data", bdata, &total_ref, &total_fast);
    if (bparams.fast_us != -1) print_row(name, "params", bparams, &total_ref, &total_fast);
  }
  printf("%-28s %-8s %9.2f %9.2f %6.1fx\n", "total", "", total_ref, total_fast, total_ref / total_fast);
  printf("kernels: %s\n", tv::fast_kernels_enabled() ? "fast variants in the tv:: entry points" : "reference");
  return 0;
}
