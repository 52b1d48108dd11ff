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

#include "tv/model/model.h"
#include "tv/ops/kernel_variants.h"
#include "tv/train/presets.h"

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

// Times one phase with both kernel sets: call(false) runs the reference kernel, call(true) the fast one.
template <class F>
void time_phase(int reps, Row* row, F&& call) {
  row->ref_us = time_us(reps, [&] { call(false); });
  row->fast_us = time_us(reps, [&] { call(true); });
}

// A layer's three phases.
struct LayerTimes {
  Row fwd, bdata, bparams;
};

void time_dense(int reps, const tv::LayerDesc&, const tv::LayerPlan& lp, Buffers& bf, LayerTimes* t) {
  const int in_n = (int)lp.in.size(), out_n = lp.out.c;
  t->fwd.macs = t->bdata.macs = t->bparams.macs = (double)in_n * out_n;
  time_phase(reps, &t->fwd, [&](bool fast) {
    (fast ? tv::fast::dense_forward : tv::ref::dense_forward)(in_n, out_n, bf.in.data(), bf.w.data(), bf.b.data(),
                                                              bf.out.data());
  });
  time_phase(reps, &t->bdata, [&](bool fast) {
    (fast ? tv::fast::dense_backward_data : tv::ref::dense_backward_data)(in_n, out_n, bf.w.data(), bf.dout.data(),
                                                                          bf.din.data());
  });
  time_phase(reps, &t->bparams, [&](bool fast) {
    (fast ? tv::fast::dense_backward_params : tv::ref::dense_backward_params)(in_n, out_n, bf.in.data(), bf.dout.data(),
                                                                              bf.dw.data(), bf.db.data());
  });
}

void time_pool(int reps, const tv::LayerDesc& d, const tv::LayerPlan& lp, Buffers& bf, LayerTimes* t) {
  const tv::Geom2D& g = lp.geom;
  const tv::Shape& a = lp.in;
  const tv::Shape& o = lp.out;
  if (d.type == tv::LayerType::MaxPool2D) {
    time_phase(reps, &t->fwd, [&](bool fast) {
      (fast ? tv::fast::maxpool2d_forward : tv::ref::maxpool2d_forward)(g, bf.in.data(), bf.out.data());
    });
    time_phase(reps, &t->bdata, [&](bool fast) {
      (fast ? tv::fast::maxpool2d_backward : tv::ref::maxpool2d_backward)(g, bf.in.data(), bf.dout.data(),
                                                                          bf.din.data());
    });
  } else if (d.type == tv::LayerType::AvgPool2D) {
    time_phase(reps, &t->fwd, [&](bool fast) {
      (fast ? tv::fast::avgpool2d_forward : tv::ref::avgpool2d_forward)(g, bf.in.data(), bf.out.data());
    });
    time_phase(reps, &t->bdata, [&](bool fast) {
      (fast ? tv::fast::avgpool2d_backward : tv::ref::avgpool2d_backward)(g, bf.dout.data(), bf.din.data());
    });
  } else {  // AdaptiveAvgPool2D, GlobalAvgPool
    time_phase(reps, &t->fwd, [&](bool fast) {
      (fast ? tv::fast::adaptive_avgpool2d_forward : tv::ref::adaptive_avgpool2d_forward)(a.h, a.w, a.c, o.h, o.w,
                                                                                          bf.in.data(), bf.out.data());
    });
    time_phase(reps, &t->bdata, [&](bool fast) {
      (fast ? tv::fast::adaptive_avgpool2d_backward : tv::ref::adaptive_avgpool2d_backward)(
          a.h, a.w, a.c, o.h, o.w, bf.dout.data(), bf.din.data());
    });
  }
}

// In place: each call works on a fresh copy of the same data (repeated LeakyReLU would shrink it to
// denormals); the copy's own time is subtracted.
void time_activation(int reps, const tv::LayerDesc& d, const tv::LayerPlan& lp, Buffers& bf, LayerTimes* t) {
  const size_t n_out = lp.out.size();
  const std::vector<float> x = bf.dout;
  const float alpha = d.alpha, lo = d.lo, hi = d.hi;
  const tv::LayerType type = d.type;
  const double copy_us = time_us(reps, [&] { std::copy(x.begin(), x.end(), bf.out.begin()); });
  // call(fast, v) on a fresh copy v of x, for the reference and then the fast kernel.
  auto in_place = [&](auto&& call) {
    Row r;
    for (const bool fast : {false, true}) {
      (fast ? r.fast_us : r.ref_us) = time_us(reps,
                                              [&] {
                                                std::copy(x.begin(), x.end(), bf.out.begin());
                                                call(fast, bf.out.data());
                                              }) -
                                      copy_us;
    }
    return r;
  };
  t->fwd = in_place([&](bool fast, float* v) {
    if (type == tv::LayerType::ReLU)
      (fast ? tv::fast::relu_forward : tv::ref::relu_forward)(v, n_out);
    else if (type == tv::LayerType::LeakyReLU)
      (fast ? tv::fast::leaky_relu_forward : tv::ref::leaky_relu_forward)(v, n_out, alpha);
    else
      (fast ? tv::fast::clip_forward : tv::ref::clip_forward)(v, n_out, lo, hi);
  });
  if (type == tv::LayerType::Clip) return;  // Clip passes the gradient through untouched
  t->bdata = in_place([&](bool fast, float* dy) {
    if (type == tv::LayerType::ReLU)
      (fast ? tv::fast::relu_backward : tv::ref::relu_backward)(bf.in.data(), dy, n_out);
    else
      (fast ? tv::fast::leaky_relu_backward : tv::ref::leaky_relu_backward)(bf.in.data(), dy, n_out, alpha);
  });
}

void time_conv2d(int reps, const tv::LayerDesc&, const tv::LayerPlan& lp, Buffers& bf, LayerTimes* t) {
  time_window_layer(
      reps, lp.geom, bf,
      WindowOps{tv::ref::conv2d_forward, tv::ref::conv2d_backward_data, tv::ref::conv2d_backward_params},
      WindowOps{tv::fast::conv2d_forward, tv::fast::conv2d_backward_data, tv::fast::conv2d_backward_params}, &t->fwd,
      &t->bdata, &t->bparams);
  t->fwd.macs = t->bdata.macs = t->bparams.macs = (double)lp.weight_count * lp.out.h * lp.out.w;
}

void time_depthwise(int reps, const tv::LayerDesc&, const tv::LayerPlan& lp, Buffers& bf, LayerTimes* t) {
  time_window_layer(reps, lp.geom, bf,
                    WindowOps{tv::ref::depthwise_conv2d_forward, tv::ref::depthwise_conv2d_backward_data,
                              tv::ref::depthwise_conv2d_backward_params},
                    WindowOps{tv::fast::depthwise_conv2d_forward, tv::fast::depthwise_conv2d_backward_data,
                              tv::fast::depthwise_conv2d_backward_params},
                    &t->fwd, &t->bdata, &t->bparams);
  t->fwd.macs = t->bdata.macs = t->bparams.macs = (double)lp.weight_count * lp.out.h * lp.out.w;
}

// The layer types whose kernels have a fast twin, and how to time them. A type not listed has no
// kernel of its own (Flatten) or no fast twin to compare (HardSwish): the bench leaves it out, so a
// new layer type needs no edit here unless it brings fast kernels.
struct TimedType {
  tv::LayerType type;
  void (*time)(int reps, const tv::LayerDesc& d, const tv::LayerPlan& lp, Buffers& bf, LayerTimes* t);
};
const TimedType kTimedTypes[] = {
    {tv::LayerType::Conv2D, time_conv2d},        {tv::LayerType::DepthwiseConv2D, time_depthwise},
    {tv::LayerType::Dense, time_dense},          {tv::LayerType::MaxPool2D, time_pool},
    {tv::LayerType::AvgPool2D, time_pool},       {tv::LayerType::AdaptiveAvgPool2D, time_pool},
    {tv::LayerType::GlobalAvgPool, time_pool},   {tv::LayerType::ReLU, time_activation},
    {tv::LayerType::LeakyReLU, time_activation}, {tv::LayerType::Clip, time_activation},
};

// Times layer i's kernels; false for a layer type kTimedTypes leaves out.
bool time_layer(int reps, const tv::LayerDesc& d, const tv::LayerPlan& lp, Buffers& bf, LayerTimes* t) {
  for (const TimedType& timed : kTimedTypes) {
    if (timed.type != d.type) continue;
    timed.time(reps, d, lp, bf, t);
    return true;
  }
  return false;
}

// Random data shaped as in training for a layer (gradients with the zeros a ReLU leaves).
Buffers buffers_for(std::mt19937& rng, const tv::LayerPlan& lp) {
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
  return bf;
}

struct BenchArgs {
  std::string preset = "tinyvision";
  tv::DataShape data;
  int classes = 3, reps = 200;
};

// Reads the command line into a; false (having said why) on a bad one.
bool parse_args(int argc, char** argv, BenchArgs* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--preset" && i + 1 < argc) {
      a->preset = argv[++i];
    } else if (arg == "--input" && i + 1 < argc) {
      if (sscanf(argv[++i], "%dx%dx%d", &a->data.height, &a->data.width, &a->data.channels) != 3) {
        fprintf(stderr, "tv_bench_kernels: --input takes HxWxC, e.g. 64x64x3\n");
        return false;
      }
    } else if (arg == "--classes" && i + 1 < argc) {
      a->classes = atoi(argv[++i]);
    } else if (arg == "--reps" && i + 1 < argc) {
      a->reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: tv_bench_kernels [--preset NAME] [--input HxWxC] [--classes N] [--reps N]\n");
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs a;
  if (!parse_args(argc, argv, &a)) return 2;
  a.data.images = 100;
  tv::ModelDesc desc;
  tv::ModelPlan plan;
  if (!tv::preset_model_for(a.preset.c_str(), a.classes, a.data, &desc) || !tv::plan_model(desc, &plan).ok()) {
    fprintf(stderr, "tv_bench_kernels: no network for preset '%s' at %dx%dx%d\n", a.preset.c_str(), a.data.height,
            a.data.width, a.data.channels);
    return 2;
  }
  printf("preset %s, input %dx%dx%d, %d classes; microseconds per sample, median of 5 x %d calls\n", a.preset.c_str(),
         a.data.height, a.data.width, a.data.channels, a.classes, a.reps);
  printf("%-28s %-8s %9s %9s %7s %7s\n", "layer", "phase", "ref us", "fast us", "speedup", "GFLOP/s");
  std::mt19937 rng(1);
  double total_ref = 0, total_fast = 0;
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    const tv::LayerPlan& lp = plan.layers[i];
    Buffers bf = buffers_for(rng, lp);
    char name[64];
    snprintf(name, sizeof name, "%2d %s %dx%dx%d", i, tv::layer_type_name(d.type), lp.out.h, lp.out.w, lp.out.c);
    LayerTimes t;
    if (!time_layer(a.reps, d, lp, bf, &t)) continue;
    print_row(name, "forward", t.fwd, &total_ref, &total_fast);
    if (t.bdata.fast_us != -1 && i > plan.first_param_layer) print_row(name, "data", t.bdata, &total_ref, &total_fast);
    if (t.bparams.fast_us != -1) print_row(name, "params", t.bparams, &total_ref, &total_fast);
  }
  printf("%-28s %-8s %9.2f %9.2f %6.1fx\n", "total", "", total_ref, total_fast, total_ref / total_fast);
  printf("kernels: %s\n", tv::fast_kernels_enabled() ? "fast variants in the tv:: entry points" : "reference");
  return 0;
}
