// Calibration: the float model over the calibration images, and the activation observers (min/max,
// percentile, mse) that turn what it saw into the ranges the exponents come from (host/quant/quantize.h).
#include <algorithm>
#include <cmath>

#include "host/base/error.h"
#include "host/base/parallel.h"
#include "host/base/text.h"
#include "host/model/model_io.h"
#include "host/quant/quantize.h"
#include "tv/model/layer_table.h"
#include "tv/train/net.h"

namespace tvh {

namespace {

constexpr int kHistogramBins = 4096;

}  // namespace

int calibrated_tensor(const tv::ModelPlan& plan, int layer) {
  int k = layer;
  while (k + 1 < plan.num_layers && tv::layer_info(plan.desc.layers[k + 1].type).int8_fused) ++k;
  return k + 1;
}

// Each observer's name, in the order of Observer.
constexpr const char* kObserverNames[] = {"mse", "minmax", "percentile"};
constexpr size_t kObservers = sizeof kObserverNames / sizeof kObserverNames[0];
static_assert(kObservers == (size_t)Observer::Percentile + 1, "a name per observer");

const char* observer_name(Observer o) {
  return (size_t)o < kObservers ? kObserverNames[(size_t)o] : "?";
}

bool parse_observer(const std::string& name, Observer* o) {
  for (size_t k = 0; k < kObservers; ++k)
    if (name == kObserverNames[k]) {
      *o = (Observer)k;
      return true;
    }
  return false;
}

int exponent_for_range(double m) {
  if (!(m > 0)) return 0;
  int k;
  double frac = std::frexp(2.0 * m / 255.0, &k);  // s = frac * 2^k, frac in [0.5, 1)
  return frac == 0.5 ? k - 1 : k;                 // ceil(log2(s))
}

namespace {

// The squared error of quantizing the values counted in h (equal bins over [0, m]) at exponent e:
// values beyond 127 * 2^e clip, values below half a step round to 0, the rest round with an error of
// step^2 / 12 on average.
double quantization_error(const std::vector<uint64_t>& h, double m, int e) {
  const double step = std::ldexp(1.0, e), top = 127.0 * step, width = m / (double)h.size();
  double err = 0;
  for (size_t b = 0; b < h.size(); ++b) {
    if (!h[b]) continue;
    const double v = ((double)b + 0.5) * width;
    const double d2 = v > top ? (v - top) * (v - top) : v < step / 2 ? v * v : step * step / 12;
    err += (double)h[b] * d2;
  }
  return err;
}

}  // namespace

int mse_exponent(const std::vector<uint64_t>& hist, double max_abs) {
  const int e_max = exponent_for_range(max_abs);
  if (hist.empty() || !(max_abs > 0)) return e_max;
  int best = e_max;
  double best_err = quantization_error(hist, max_abs, e_max);
  for (int e = e_max - 1; e >= e_max - 4; --e) {
    const double err = quantization_error(hist, max_abs, e);
    if (err < best_err) best_err = err, best = e;
  }
  return best;
}

namespace {

// Runs `visit(worker, tensor, values, count)` on every tensor of the float model for every image of idx,
// the images dealt in contiguous chunks to `threads` threads (worker = 0..threads-1). What the
// observers gather per worker (a maximum, integer counts) combines to the same result in any order,
// so any thread count gives the same bits.
template <typename Visit>
void for_each_tensor(const tv::ModelPlan& plan, const float* params, const ImageSet& ds, const std::vector<int>& idx,
                     int threads, Visit&& visit) {
  const int L = plan.num_layers;
  const float scale = plan.desc.input.scale, offset = plan.desc.input.offset;
  auto chunk = [&](int worker, size_t from, size_t to) {
    std::vector<float> a(plan.max_activation), b(plan.max_activation);
    for (size_t j = from; j < to; ++j) {
      const uint8_t* px = ds.image((size_t)idx[j]);
      const size_t n = plan.input.size();
      for (size_t k = 0; k < n; ++k) a[k] = (float)px[k] * scale + offset;
      float* cur = a.data();
      float* nxt = b.data();
      visit(worker, 0, cur, n);
      for (int i = 0; i < L; ++i) {
        if (tv::layer_in_place(plan.desc.layers[i].type)) {
          tv::forward_layer(plan, i, params, cur, cur);
        } else {
          tv::forward_layer(plan, i, params, cur, nxt);
          std::swap(cur, nxt);
        }
        // A histogram of Inf or NaN has no bins: refused here, before any range is computed from it.
        const tv::Status st = tv::check_finite_output(i, cur, plan.layers[i].out.size());
        if (!st.ok()) throw_if_not_runnable(st, plan, ds.name((size_t)idx[j]));
        visit(worker, i + 1, cur, plan.layers[i].out.size());
      }
    }
  };
  for_each_run(idx.size(), threads, chunk);
}

}  // namespace

CalibrationStats calibrate(const tv::ModelPlan& plan, const float* params, const ImageSet& ds,
                           const std::vector<int>& idx, const QuantOptions& options) {
  if (idx.empty()) throw Error(ds.source() + ": no calibration images (the split left none).");
  if (ds.height != plan.input.h || ds.width != plan.input.w || ds.channels != plan.input.c)
    throw Error(ds.source() + ": decoded at a size other than the model's input.");
  if (!(options.percentile > 0 && options.percentile <= 100))
    throw Error("the percentile must be in (0, 100], not " + fmt("%g", options.percentile) + ".");
  const int L = plan.num_layers;
  const int threads = run_workers(idx.size(), options.threads);
  CalibrationStats s;
  s.images = (int)idx.size();
  s.max_abs.assign((size_t)L + 1, 0.0);
  // Pass 1: max|x| per tensor, per worker, then the largest of the workers'.
  std::vector<std::vector<double>> worker_max((size_t)threads, std::vector<double>((size_t)L + 1, 0.0));
  for_each_tensor(plan, params, ds, idx, threads, [&](int w, int t, const float* x, size_t n) {
    double m = worker_max[(size_t)w][(size_t)t];
    for (size_t k = 0; k < n; ++k) m = std::max(m, (double)std::fabs(x[k]));
    worker_max[(size_t)w][(size_t)t] = m;
  });
  for (const auto& wm : worker_max)
    for (int t = 0; t <= L; ++t) s.max_abs[(size_t)t] = std::max(s.max_abs[(size_t)t], wm[(size_t)t]);
  s.range = s.max_abs;
  if (options.observer == Observer::MinMax) return s;
  const bool mse = options.observer == Observer::Mse;
  // The scores (the last conv / dense layer's output, after its fused activation) and what follows keep
  // max|x| under mse: clipping them can turn the top class into a tie.
  int scores = L + 1;
  for (int i = L - 1; i >= 0; --i)
    if (tv::layer_info(plan.desc.layers[i].type).int8 == tv::Int8Exponent::WithWeights) {
      scores = calibrated_tensor(plan, i);
      break;
    }
  const int last = mse ? scores - 1 : L;  // the last tensor whose range a histogram sets
  // Pass 2: a histogram of |x| per tensor, per worker, then the counts added (integers: exact).
  std::vector<std::vector<std::vector<uint64_t>>> worker_hist((size_t)threads,
                                                              std::vector<std::vector<uint64_t>>((size_t)L + 1));
  for (auto& wh : worker_hist)
    for (int t = 1; t <= last; ++t) wh[(size_t)t].assign(kHistogramBins, 0);
  for_each_tensor(plan, params, ds, idx, threads, [&](int w, int t, const float* x, size_t n) {
    const double m = s.max_abs[(size_t)t];
    if (t == 0 || t > last || !(m > 0)) return;  // the input's exponent is fixed by the pixel rule
    auto& h = worker_hist[(size_t)w][(size_t)t];
    for (size_t k = 0; k < n; ++k) {
      if (mse && x[k] == 0.f) continue;  // exact at every exponent
      int bin = (int)(std::fabs(x[k]) / m * kHistogramBins);
      h[(size_t)std::min(bin, kHistogramBins - 1)]++;
    }
  });
  std::vector<std::vector<uint64_t>> hist = worker_hist[0];
  for (size_t w = 1; w < worker_hist.size(); ++w)
    for (int t = 1; t <= last; ++t)
      for (int bin = 0; bin < kHistogramBins; ++bin)
        hist[(size_t)t][(size_t)bin] += worker_hist[w][(size_t)t][(size_t)bin];
  for (int t = 1; t <= last; ++t) {
    const auto& h = hist[(size_t)t];
    const double m = s.max_abs[(size_t)t];
    if (mse) {
      if (m > 0) s.range[(size_t)t] = 127.5 * std::ldexp(1.0, mse_exponent(h, m));
      continue;
    }
    uint64_t total = 0;
    for (uint64_t c : h) total += c;
    if (!total) continue;
    const double want = options.percentile / 100.0 * (double)total;
    uint64_t cum = 0;
    for (int bin = 0; bin < kHistogramBins; ++bin) {
      cum += h[(size_t)bin];
      if ((double)cum >= want) {
        s.range[(size_t)t] = m * (bin + 1) / kHistogramBins;
        break;
      }
    }
  }
  return s;
}

}  // namespace tvh
