// Reading and writing model files on the host: .tvb blobs and the reference's raw myWeights.bin.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"
#include "tv/train/net.h"

namespace tvh {

// One sentence for a core status (tv::status_message_text: the words the board prints too), naming the
// layer when there is one, e.g.
// "layer 3 (conv2d): the window is larger than its input, so the layer has no output (5, at most 3)".
std::string status_message(const tv::Status& st, const tv::ModelDesc* desc = nullptr);
// The status's numbers in words, by what they are (tv::status_figures_text), e.g. " (5, at most 4)"; ""
// without.
std::string status_figures_text(const tv::Status& st);

// One sentence for a blob_decode refusal: like status_message, but a non-finite weight names its tensor
// and element (the view stays filled for that refusal).
std::string blob_status_message(const tv::Status& st, const tv::BlobView& view);

// Throws tvh::Error when running the model on `input` (a file's name) returned a failure, e.g. the
// core's NonFiniteActivation: "the model cannot run on 'x.jpg': layer 3 (conv2d): its output is
// infinite or NaN ...". The one sentence every path that runs a model gives.
void throw_if_not_runnable(const tv::Status& st, const tv::ModelPlan& plan, const std::string& input);

// Plans a description; throws tvh::Error("<what>: <status message>") when it is invalid.
std::unique_ptr<tv::ModelPlan> plan_or_throw(const tv::ModelDesc& desc, const std::string& what);

// A kArenaAlign-aligned, zero-filled byte buffer.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  uint8_t* data() const { return ptr_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> ptr_;
  size_t size_ = 0;
};

// A model in memory, decoded, checked and bound once per process: its plan, labels and either float
// parameters or (int8) the decoded blob and the bound int8 engine. Every tool runs it through
// ModelRunner and reads its facts from it (crc, view). Movable, not copyable; the view and the engine
// point into `blob` and `plan`, whose buffers a move keeps.
struct LoadedModel {
  std::unique_ptr<tv::ModelPlan> plan;
  std::vector<std::string> labels;
  std::vector<float> params;  // float models
  std::vector<uint8_t> blob;  // the file's bytes (.tvb or the raw myWeights.bin)
  std::string provenance;
  std::string format;  // "tvb" or "webmcu-bin"
  bool int8 = false;
  uint32_t crc = 0;                     // CRC-32 of the whole file (as tvexport, headers and the firmware show it)
  std::unique_ptr<tv::BlobView> view;   // .tvb: the decoded blob (views into `blob`); null for webmcu-bin
  std::unique_ptr<tv::Q8Model> engine;  // int8: the bound int8 engine (null when it cannot run the model)
  tv::Status engine_status;             // int8: q8_bind's verdict (why `engine` is null)
};

// The one run path of a loaded model: a uint8 HWC image at the model's input size in, its outputs out
// (a classifier's class probabilities; a detector's grid, a softmax per cell), on the float engine or on
// the model's bound int8 engine. Holds its own work buffer: one ModelRunner per thread. Throws tvh::Error
// when the int8 engine cannot run the model or a kernel refuses.
class ModelRunner {
 public:
  explicit ModelRunner(const LoadedModel& model);
  // Writes tv::plan_outputs probabilities into probs (may be null) and, for an int8 model, the int8
  // outputs into logits (may be null). Throws tvh::Error naming the layer when the float model's output
  // is not finite (throw_if_not_runnable).
  void run(const uint8_t* image, float* probs, int8_t* logits = nullptr);
  // A classifier: run, and the most probable class.
  int classify(const uint8_t* image, float* probs = nullptr, int8_t* logits = nullptr);
  const LoadedModel& model() const { return m_; }

 private:
  const LoadedModel& m_;
  AlignedBuffer work_;
  tv::Inference inf_;
  std::vector<float> probs_;
};

// Options for reading a raw myWeights.bin (it carries no description of its own).
struct RawOptions {
  std::string preset = "webmcu";    // only webmcu is defined for the raw format
  std::vector<std::string> labels;  // default: class0, class1, ...
};

// Which tasks a tool takes: a tool that runs only classifiers refuses a detector with one sentence
// naming the file ("NAME is a detector ..."); one that runs both says so.
enum class Tasks { Classifiers, Any };

// Loads a .tvb blob or a raw myWeights.bin (chosen by content: a .tvb starts with "TVB1").
// Throws tvh::Error naming the file and the problem.
LoadedModel load_model(const std::string& path, const RawOptions& raw = RawOptions(), Tasks tasks = Tasks::Classifiers);
// The same for a file's bytes already in memory (`path` names it in messages).
LoadedModel decode_model_file(std::vector<uint8_t> bytes, const std::string& path, const RawOptions& raw = RawOptions(),
                              Tasks tasks = Tasks::Classifiers);
// Decodes a .tvb from memory (name is used in messages).
LoadedModel decode_model(const std::vector<uint8_t>& bytes, const std::string& name, Tasks tasks = Tasks::Classifiers);

// True for a detector (tv::Task::Detect: a grid of objects).
bool is_detector(const LoadedModel& m);

// Why the board's firmware cannot take this model as it is, as one sentence (empty when it can): a
// class count outside tv::kBoardMinClasses..kBoardMaxClasses, or two labels FAT takes for one card
// folder (tv::same_folder_name). tvlink push refuses such a model before sending a byte; tvexport
// before writing a header for the board.
std::string board_model_problem(const LoadedModel& m);

// Encodes a model as a .tvb blob: its tensors, and for an int8 model its activation exponents (input
// + one per layer; empty for a float model). Throws when the labels do not match the classes.
std::vector<uint8_t> encode_blob(const tv::ModelPlan& plan, const std::vector<std::string>& labels,
                                 const std::string& provenance, const tv::BlobTensor* tensors, int num_tensors,
                                 const std::vector<int8_t>& act_exps = {});
// Encodes a float model as a .tvb blob.
std::vector<uint8_t> encode_float_blob(const tv::ModelPlan& plan, const float* params,
                                       const std::vector<std::string>& labels, const std::string& provenance);
// An upper bound of the .tvb size of a model (float: 4 bytes per parameter, plus room for the sections):
// what an output's folder must have free before the work that makes it starts.
uint64_t blob_bytes_estimate(const tv::ModelPlan& plan);
// Encodes and writes a float model atomically.
void save_float_model(const std::string& path, const tv::ModelPlan& plan, const float* params,
                      const std::vector<std::string>& labels, const std::string& provenance);
// Writes the raw reference file atomically (webmcu models only).
void save_raw_weights(const std::string& path, const tv::ModelPlan& plan, const float* params);

}  // namespace tvh
