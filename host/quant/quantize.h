// Post-training quantization of a float model to ESP-DL power-of-two int8 (the int8 blob convention of
// tv/int8/q8_model.h), with the ESP32-S3's accumulator, bias and shift limits enforced per layer.
//
// The rules (docs/quantization.md explains them with the figures measured):
// - Exponent of a tensor from its largest magnitude m: e = ceil(log2(2 * m / 255)) (esp-ppq's min/max
//   observer, symmetric, scale rounded UP to a power of two). Weights: m = max|w| of the tensor (or of
//   each output channel with per_channel, which the ESP32-S3 cannot run). Activations: m = max|x| over
//   the calibration images (or a percentile of |x|). The input: m = the largest |pixel * scale + offset|
//   (1.0 for pixel / 255), independent of the images.
// - An activation that ESP-DL fuses into the producing layer (ReLU, Clip) is calibrated on the fused
//   output; MaxPool, ReLU, Clip and Flatten keep their input's exponent; LeakyReLU, AvgPool and the
//   global pools get their own.
// - Biases are int32 at e_in + e_w, rounded half up.
// - The ESP32-S3 limits, checked on every conv / depthwise / dense layer and fixed rather than ignored:
//   a bias outside [-2^19, 2^19 - 1] raises the weight exponent until it fits; so does an accumulation
//   that can leave the 20-bit lanes. "Can" is decided on the int8 values the layer's input can really
//   hold on ANY image (tracked through the layers: pixels at the input exponent, [0, 127] after ReLU,
//   the table's range after LeakyReLU, ...): every running sum lies between min(b, 0) + sum_i
//   min(w_i lo, w_i hi) and max(b, 0) + sum_i max(w_i lo, w_i hi), which is at most the kernels'
//   sum|q_w| * 128 + |q_b| (also reported). When the input comes from a LeakyReLU or an average pool,
//   some of the bits can be taken on that input's exponent instead (its reachable values shrink); of
//   those guaranteed splits the one that best reproduces the float model on the calibration images is
//   kept. A negative shift e_out - e_in - e_w raises the output exponent to e_in + e_w. Each change is
//   reported as one sentence naming the layer. AccCheck::Calibrated (an option) only keeps the
//   calibration images' sums within 2^18 and reports every layer left without the guarantee.
// - A detector (tv::Task::Detect) with calibration images: its grid's logits take, of max|x|'s exponent and
//   the four below it, the one whose int8 grid decodes (tv::grid_cell_class at the model's threshold) the same
//   class as the float model in the most cells of the calibration images (at most 256 of them, evenly spaced;
//   then the smallest squared error of
//   the probabilities); then every other layer's output exponent, in order, one finer or one coarser when that
//   scores better. Each change is reported as one sentence naming the layer (docs/detection.md measures why).
// The result is deterministic: the same model, images and options give the same bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/photos/image_set.h"
#include "tv/model/model.h"

namespace tvh {

// How the 20-bit accumulator limit is enforced.
enum class AccCheck {
  WorstCase,   // sum|q_w| * 128 + |q_b| <= 2^19 - 1 for every output: exact on the device for ANY input
  Calibrated,  // the running sums reached on the calibration images stay <= 2^18 - 1 (one bit of margin);
               // layers whose worst case exceeds 2^19 - 1 are reported as not guaranteed
};

// How an activation's range (and so its exponent) is chosen from the calibration images.
enum class Observer {
  Mse,         // the exponent, among max|x|'s and the four below it, that gives the smallest squared error
               // (rounding plus clipping) over every value of every calibration image; the tensors from the
               // last conv / dense layer on (the scores) keep max|x|
  MinMax,      // max|x| (esp-ppq's min/max observer)
  Percentile,  // the `percentile`-th percentile of |x|
};
const char* observer_name(Observer o);  // "mse", "minmax", "percentile"
// The observer of that name (observer_name's); false for another name.
bool parse_observer(const std::string& name, Observer* o);

struct QuantOptions {
  bool per_channel = false;  // one weight exponent per output channel (not for the ESP32-S3)
  Observer observer = Observer::Mse;
  double percentile = 99.99;  // Observer::Percentile only, in (0, 100]
  AccCheck acc_check = AccCheck::WorstCase;
  int threads = 1;  // calibration threads (the result is the same for any count)
};

// Largest |value| per tensor seen during calibration: [0] the input, [i + 1] layer i's output.
struct CalibrationStats {
  std::vector<double> max_abs;
  std::vector<double> range;  // what the exponents are computed from (max_abs, or the percentile)
  int images = 0;
};

// Runs the float model over images idx (a classification or a detection dataset's) layer by layer
// (tv::forward_layer) and records every tensor's largest magnitude; the Mse and Percentile observers then
// set each range from a second pass with a 4096-bin histogram of |x| per tensor (Mse: the range is
// 127.5 * 2^e for the chosen exponent e). Throws tvh::Error when idx is empty or the images do not fit the model.
CalibrationStats calibrate(const tv::ModelPlan& plan, const float* params, const ImageSet& ds,
                           const std::vector<int>& idx, const QuantOptions& options);

// The Mse observer's choice for one tensor: hist counts |x| of its non-zero values in equal bins over
// [0, max_abs]; of the exponents exponent_for_range(max_abs) and the four below it, the one with the
// smallest estimated squared error (clipping beyond 127 * 2^e, rounding below it); ties keep the larger.
int mse_exponent(const std::vector<uint64_t>& hist, double max_abs);

// ESP-DL fuses ReLU and Clip into the layer before them: that layer's output exponent is calibrated on
// the last fused activation's output. The index of that tensor in CalibrationStats (layer + 1).
int calibrated_tensor(const tv::ModelPlan& plan, int layer);

// The exponent e = ceil(log2(2 * m / 255)) for a largest magnitude m > 0 (exact, via frexp).
int exponent_for_range(double m);

// What the quantizer decided for one layer.
struct LayerQuant {
  int index = 0;
  std::string name;  // "l4_conv2d"
  std::string type;  // "conv2d"
  int e_in = 0, e_out = 0;
  bool has_params = false;
  int e_w = 0;                             // per-tensor weight exponent (has_params, !per_channel)
  std::vector<int> e_w_channels;           // per-channel weight exponents (per_channel)
  int shift_min = 0, shift_max = 0;        // e_out - e_in - e_w over the channels
  int64_t worst_acc = 0;                   // sum|q_w| * 128 + |q_b| over the outputs: the bound for ANY int8 input
  int headroom_bits = 19;                  // 19 - bit_length(worst_acc)
  int64_t max_abs_bias = 0;                // largest |q_b|
  double calib_range = 0;                  // the calibrated magnitude the output exponent came from (0 = kept)
  int e_w_initial = 0, e_out_initial = 0;  // before any adjustment
  int64_t in_lo = -128, in_hi = 127;       // the int8 values the input can hold on ANY image
  int64_t out_lo = -128, out_hi = 127;     // and the output
  int64_t acc_bound = 0;                   // largest |running sum| any reachable input can produce (the guarantee)
  int bound_headroom_bits = 19;            // 19 - bit_length(acc_bound): >= 0 fits the S3's 20-bit lanes
  int64_t observed_acc = 0;                // largest |running sum| on the calibration images (when they were given)
  int observed_headroom_bits = 19;
  std::vector<std::string> adjustments;  // one sentence each, naming the layer
};

struct QuantResult {
  std::vector<uint8_t> blob;     // the int8 .tvb (kBlobFlagInt8)
  std::vector<int8_t> act_exps;  // input + one per layer
  std::vector<LayerQuant> layers;
  std::vector<std::string> adjustments;  // every layer's adjustments, in layer order
  size_t float_weight_bytes = 0;         // param_count * 4
  size_t int8_weight_bytes = 0;  // tv::q8_memory().weight_bytes (each layer's int8 weights padded to 16, int32 biases)
};

// Quantizes a float model with calibrated ranges into an int8 blob that q8_bind accepts (checked
// before returning); a detector stays a detector (its TASK section and threshold). When calibration
// images are given, the int8 model is run over them (the reference interpreter, host/quant/q8_reference.h)
// to report the accumulator magnitudes it reaches; the Calibrated check needs them. A choice between
// guaranteed candidates is made by how well each reproduces the float model on those images: the same top
// class per image (a classifier) or per grid cell (a detector), then the smallest squared error. Throws
// tvh::Error naming the layer when the model holds an op the int8 engine cannot run.
QuantResult quantize_model(const tv::ModelPlan& plan, const float* params, const CalibrationStats& stats,
                           const std::vector<std::string>& labels, const std::string& provenance,
                           const QuantOptions& options, const ImageSet* images, const std::vector<int>* idx);
// The same with a classification dataset's images, or none.
inline QuantResult quantize_model(const tv::ModelPlan& plan, const float* params, const CalibrationStats& stats,
                                  const std::vector<std::string>& labels, const std::string& provenance,
                                  const QuantOptions& options, const Dataset* images = nullptr,
                                  const std::vector<int>* idx = nullptr) {
  if (!images) return quantize_model(plan, params, stats, labels, provenance, options, (const ImageSet*)nullptr, idx);
  const ImageSet set(*images);
  return quantize_model(plan, params, stats, labels, provenance, options, &set, idx);
}

// The per-layer report as a text table (one row per layer; adjustments listed below it).
std::string quant_table(const tv::ModelPlan& plan, const QuantResult& r);

}  // namespace tvh
