#include "host/model/model_io.h"

#include <cstdlib>
#include <cstring>

#include "host/base/error.h"
#include "host/base/files.h"
#include "tv/crc32.h"
#include "tv/formats/raw_weights.h"
#include "tv/names.h"
#include "tv/train/presets.h"

namespace tvh {

std::string status_figures_text(const tv::Status& st) {
  char text[128];
  tv::status_figures_text(st, text, (int)sizeof(text));
  return text;
}

std::string status_message(const tv::Status& st, const tv::ModelDesc* desc) {
  char text[256];
  tv::status_message_text(st, desc, text, (int)sizeof(text));
  return text;
}

std::string blob_status_message(const tv::Status& st, const tv::BlobView& view) {
  if (st.code == tv::StatusCode::BlobDuplicateLabel)
    return "classes " + std::to_string(st.a) + " and " + std::to_string(st.b) +
           " have the same label, so the model cannot tell them apart; retrain it with distinct class names";
  if (st.code != tv::StatusCode::NonFiniteWeight) return status_message(st);
  if (st.a >= 0 && st.a < view.num_tensors)
    return "tensor " + std::string(view.tensors[st.a].name) + " (layer " + std::to_string(st.layer) +
           ") holds an infinite or NaN value at element " + std::to_string(st.b) +
           ", so the model is broken; retrain it or use an earlier copy";
  return "the input scale or offset is infinite or NaN, so the model is broken; retrain it or use an earlier copy";
}

void throw_if_not_runnable(const tv::Status& st, const tv::ModelPlan& plan, const std::string& input) {
  if (st.ok()) return;
  std::string what = status_message(st, &plan.desc);
  if (st.code == tv::StatusCode::NonFiniteActivation) {
    what = "layer " + std::to_string(st.layer) + " (" + tv::layer_type_name(plan.desc.layers[st.layer].type) +
           ")'s output is infinite or NaN (element " + std::to_string(st.a) +
           ") although every weight is finite: its weights overflow float; retrain the model or use an earlier copy";
  }
  throw Error("the model cannot run on " + (input.empty() ? std::string("this input") : "'" + input + "'") + ": " +
              what + ".");
}

std::unique_ptr<tv::ModelPlan> plan_or_throw(const tv::ModelDesc& desc, const std::string& what) {
  auto plan = std::make_unique<tv::ModelPlan>();
  tv::Status st = tv::plan_model(desc, plan.get());
  if (!st.ok() && st.code == tv::StatusCode::Overflow && plan->overflow_floats)
    throw Error(what + ": invalid model, " + tv::plan_figure_name(st.a) + " would hold " +
                std::to_string(plan->overflow_floats) + " floats (" + std::to_string(plan->overflow_floats * 4) +
                " bytes), more than the " + std::to_string(tv::kMaxPlanFloats) + " a model may have.");
  if (!st.ok()) throw Error(what + ": invalid model, " + status_message(st, &desc) + ".");
  return plan;
}

AlignedBuffer::AlignedBuffer(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes.");
  std::memset(p, 0, rounded);
  ptr_.reset((uint8_t*)p);
  size_ = bytes;
}

void AlignedBuffer::Free::operator()(uint8_t* p) const {
  std::free(p);
}

bool is_detector(const LoadedModel& m) {
  return m.plan && m.plan->desc.task == tv::Task::Detect;
}

LoadedModel decode_model(const std::vector<uint8_t>& bytes, const std::string& name, Tasks tasks) {
  LoadedModel m;
  m.blob = bytes;
  m.view = std::make_unique<tv::BlobView>();
  tv::BlobView* view = m.view.get();
  tv::Status st = tv::blob_decode(m.blob.data(), m.blob.size(), view);
  if (!st.ok()) throw Error(name + ": " + blob_status_message(st, *view) + ".");
  if (view->model.task != tv::Task::Classify && tasks == Tasks::Classifiers)
    throw Error(name +
                " is a detector (a grid of objects, its TASK section), and this tool runs classifiers: "
                "tvtrain detect, tvtrain --eval, tvquant and tvexport run detectors (docs/detection.md); use a "
                "classifier here.");
  m.plan = plan_or_throw(view->model, name);
  m.format = "tvb";
  m.crc = tv::crc32(0, m.blob.data(), view->size);
  m.int8 = view->is_int8();
  for (int i = 0; i < view->num_labels; ++i) {
    const char* t;
    size_t n;
    tv::blob_label(*view, i, &t, &n);
    m.labels.emplace_back(t, n);
  }
  if (view->provenance) m.provenance.assign(view->provenance, view->provenance_len);
  if (!m.int8) {
    m.params.assign(m.plan->param_count, 0.f);
    st = tv::blob_load_float_params(*view, *m.plan, m.params.data());
    if (!st.ok()) throw Error(name + ": " + status_message(st, &view->model) + ".");
  } else {
    m.engine = std::make_unique<tv::Q8Model>();
    m.engine_status = tv::q8_bind(*view, *m.plan, m.engine.get());
    if (!m.engine_status.ok()) m.engine.reset();
  }
  return m;
}

ModelRunner::ModelRunner(const LoadedModel& model) : m_(model) {
  const tv::ModelPlan& plan = *m_.plan;
  probs_.assign(tv::plan_outputs(plan), 0.f);
  if (m_.int8) {
    if (!m_.engine) throw Error("the int8 model cannot run: " + status_message(m_.engine_status, &plan.desc) + ".");
    work_ = AlignedBuffer(tv::q8_memory(plan).work_bytes);
    return;
  }
  work_ = AlignedBuffer(tv::inference_memory(plan).work_bytes);
  const tv::Status st = tv::inference_init(&inf_, &plan, m_.params.data(), work_.data(), work_.size());
  if (!st.ok()) throw Error("cannot run the model: " + status_message(st, &plan.desc) + ".");
}

void ModelRunner::run(const uint8_t* image, float* probs, int8_t* logits) {
  float* p = probs ? probs : probs_.data();
  if (m_.int8) {
    const tv::Status st = tv::q8_infer_u8(*m_.engine, image, (int8_t*)work_.data(), p, logits);
    if (!st.ok()) throw Error("the int8 model failed: " + status_message(st, &m_.plan->desc) + ".");
  } else {
    throw_if_not_runnable(tv::infer_u8(inf_, image, p), *m_.plan, "");
  }
}

int ModelRunner::classify(const uint8_t* image, float* probs, int8_t* logits) {
  float* p = probs ? probs : probs_.data();
  run(image, p, logits);
  return tv::argmax(p, m_.plan->desc.num_classes);
}

LoadedModel load_model(const std::string& path, const RawOptions& raw, Tasks tasks) {
  return decode_model_file(read_file(path, size_t(256) << 20), path, raw, tasks);
}

LoadedModel decode_model_file(std::vector<uint8_t> bytes, const std::string& path, const RawOptions& raw, Tasks tasks) {
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "TVB1", 4) == 0) return decode_model(bytes, path, tasks);
  // A raw reference file: no header, so the size must match the preset's model for some class count.
  if (raw.preset != "webmcu")
    throw Error(path + ": not a .tvb blob, and raw weight files are only defined for the webmcu preset.");
  int k = raw.labels.empty() ? tv::raw_weights_classes_for_size(bytes.size()) : (int)raw.labels.size();
  if (k < 2)
    throw Error(path + ": neither a .tvb blob nor a raw webmcu myWeights.bin (" + std::to_string(bytes.size()) +
                " bytes fits no class count).");
  tv::ModelDesc desc;
  tv::webmcu_model(k, &desc);
  LoadedModel m;
  m.plan = plan_or_throw(desc, path);
  m.params.assign(m.plan->param_count, 0.f);
  tv::Status st = tv::raw_weights_import(bytes.data(), bytes.size(), *m.plan, m.params.data());
  if (st.code == tv::StatusCode::NonFiniteWeight)
    throw Error(path + ": layer " + std::to_string(st.layer) + " (" + tv::layer_type_name(desc.layers[st.layer].type) +
                ") holds an infinite or NaN value (float " + std::to_string(st.b) +
                " of the file), so the model is broken; retrain it or use an earlier copy.");
  if (!st.ok())
    throw Error(path + ": raw webmcu weights for " + std::to_string(k) + " classes must be " +
                std::to_string(tv::raw_weights_size(k)) + " bytes, the file has " + std::to_string(bytes.size()) + ".");
  m.labels = raw.labels;
  for (int i = (int)m.labels.size(); i < k; ++i) m.labels.push_back("class" + std::to_string(i));
  m.format = "webmcu-bin";
  m.blob = std::move(bytes);
  m.crc = tv::crc32(0, m.blob.data(), m.blob.size());
  return m;
}

std::vector<uint8_t> encode_blob(const tv::ModelPlan& plan, const std::vector<std::string>& labels,
                                 const std::string& provenance, const tv::BlobTensor* tensors, int num_tensors,
                                 const std::vector<int8_t>& act_exps) {
  if ((int)labels.size() != plan.desc.num_classes)
    throw Error("the model has " + std::to_string(plan.desc.num_classes) + " classes but " +
                std::to_string(labels.size()) + " labels were given.");
  std::vector<const char*> lp;
  for (const auto& l : labels) lp.push_back(l.c_str());
  tv::BlobContents c;
  c.model = &plan.desc;
  c.labels = lp.data();
  c.num_labels = (int)lp.size();
  c.provenance = provenance.empty() ? nullptr : provenance.c_str();
  c.tensors = tensors;
  c.num_tensors = num_tensors;
  if (!act_exps.empty()) {
    c.act_exps = act_exps.data();
    c.num_act_exps = (int)act_exps.size();
    c.flags = tv::kBlobFlagInt8;
  }
  std::vector<uint8_t> out(tv::blob_encoded_size(c));
  size_t written = 0;
  const tv::Status st = tv::blob_encode(c, out.data(), out.size(), &written);
  if (!st.ok())
    throw Error(std::string("cannot encode the ") + (act_exps.empty() ? "" : "int8 ") +
                "model: " + status_message(st, &plan.desc) + ".");
  out.resize(written);
  return out;
}

std::vector<uint8_t> encode_float_blob(const tv::ModelPlan& plan, const float* params,
                                       const std::vector<std::string>& labels, const std::string& provenance) {
  std::vector<tv::BlobTensor> tensors(tv::kMaxBlobTensors);
  const int nt = tv::float_tensors(plan, params, tensors.data());
  return encode_blob(plan, labels, provenance, tensors.data(), nt);
}

uint64_t blob_bytes_estimate(const tv::ModelPlan& plan) {
  return (uint64_t)plan.param_count * 4 + 65536;
}

void save_float_model(const std::string& path, const tv::ModelPlan& plan, const float* params,
                      const std::vector<std::string>& labels, const std::string& provenance) {
  write_file_atomic(path, encode_float_blob(plan, params, labels, provenance));
}

void save_raw_weights(const std::string& path, const tv::ModelPlan& plan, const float* params) {
  if (!tv::raw_weights_compatible(plan))
    throw Error(path + ": the raw myWeights.bin format only holds the webmcu network at 64x64x3.");
  std::vector<uint8_t> out(tv::raw_weights_size(plan.desc.num_classes));
  tv::Status st = tv::raw_weights_export(plan, params, out.data(), out.size());
  if (!st.ok()) throw Error(path + ": " + status_message(st, &plan.desc) + ".");
  write_file_atomic(path, out);
}

std::string board_model_problem(const LoadedModel& m) {
  const int k = m.plan ? m.plan->desc.num_classes : 0;
  if (is_detector(m) && k > tv::kBoardMaxClasses)  // label 0 is the background
    return "it finds " + std::to_string(k - 1) + " kinds of object; the board's firmware runs detectors of 1 to " +
           std::to_string(tv::kBoardMaxClasses - 1);
  if (k < tv::kBoardMinClasses || k > tv::kBoardMaxClasses)
    return "it has " + std::to_string(k) + " classes; the board's firmware runs " +
           std::to_string(tv::kBoardMinClasses) + " to " + std::to_string(tv::kBoardMaxClasses);
  for (size_t i = 0; i < m.labels.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (tv::same_folder_name(m.labels[j].data(), m.labels[j].size(), m.labels[i].data(), m.labels[i].size()))
        return "its classes " + std::to_string(j) + " ('" + one_line(m.labels[j]) + "') and " + std::to_string(i) +
               " ('" + one_line(m.labels[i]) +
               "') would share one card folder (FAT ignores letter case and trailing dots and spaces): rename one "
               "(tvtrain PHOTOS/ --init MODEL.tvb --rename OLD=NEW --epochs 0 -o RENAMED.tvb)";
  return "";
}

}  // namespace tvh
