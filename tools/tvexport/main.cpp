// tvexport: a trained model (.tvb, or the reference's raw myWeights.bin) -> a C header, the raw
// myWeights.bin, or (int8 models) an ESP-DL .espdl; `tvexport info` describes a model and its memory;
// `tvexport verify` runs any .espdl file's embedded test vectors through our int8 engine.
// Results go to stdout, logs to stderr; errors are one sentence naming the file, exit 1.
#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/json_text.h"
#include "host/espdl/espdl.h"
#include "host/espdl/writer.h"
#include "host/export/export.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/photos/detection_dataset.h"
#include "host/train/init_model.h"
#include "tools/common/cli.h"

namespace {

struct ExportArgs {
  std::string model, output, style = "tinyvision", name = "TV_MODEL", format, preset = "webmcu", labels;
  std::string test_images;  // .espdl: dataset whose first image becomes the embedded test input
};

std::vector<std::string> split_labels(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string l = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (l.empty()) throw tvh::Error("--labels " + text + ": a label is empty (write them as a,b,c).");
    out.push_back(l);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

tvh::LoadedModel load(const std::string& path, const std::string& preset, const std::string& labels) {
  tvh::RawOptions raw;
  raw.preset = preset;
  raw.labels = split_labels(labels);
  tvh::LoadedModel m = tvh::load_model(path, raw, tvh::Tasks::Any);  // a detector too: each format says if it holds one
  if (m.format == "tvb" && !labels.empty())
    throw tvh::Error(path + ": --labels only applies to a raw myWeights.bin; a .tvb carries its own labels.");
  return m;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Writes a result to its file atomically, or to stdout for "-".
void emit(const std::string& path, const std::string& text) {
  if (path == "-") {
    tvh::write_stdout(text);
  } else {
    tvh::write_file_atomic(path, text);
  }
}

// ---- .espdl (ESP-DL) export and verification.

// The embedded test image: the first image (first class folder in sorted order, first path; a detector's:
// the first photo of a detection dataset) of --test-images, decoded and resized as tvtrain does, or the
// synthetic picture.
tvh::EspdlExportOptions espdl_options(const ExportArgs& args, const tvh::LoadedModel& m) {
  tvh::EspdlExportOptions o;
  o.version = TV_VERSION;
  if (args.test_images.empty()) return o;
  const tv::InputDesc& in = m.plan->desc.input;
  if (tvh::is_detector(m)) {  // a detector's input is the whole photo, as tvtrain reads photos with boxes
    tvh::DetectionOptions d;
    d.path = args.test_images;
    d.height = in.height;
    d.width = in.width;
    d.channels = in.channels;
    d.order = in.order;
    d.threads = 0;
    d.keep_unlabelled = true;  // any photo will do as a test input
    const tvh::DetectionDataset ds = tvh::load_detection_dataset(d);
    o.test_image.assign(ds.image(0), ds.image(0) + ds.image_bytes());
    std::string file = ds.paths[0];
    const size_t slash = file.find_last_of("/\\:");
    o.test_image_source = slash == std::string::npos ? file : file.substr(slash + 1);
    return o;
  }
  tvh::DatasetOptions d;
  d.path = args.test_images;
  d.height = in.height;
  d.width = in.width;
  d.channels = in.channels;
  d.order = in.order;
  d.threads = 0;  // decoding threads; the result does not depend on them
  d.outputs = {{"-o", args.output}};
  tvh::Dataset ds = tvh::load_dataset(d);
  if (ds.size() == 0) throw tvh::Error(args.test_images + ": holds no image to use as the test input.");
  o.test_image.assign(ds.image(0), ds.image(0) + ds.image_bytes());
  // Name it inside the dataset (class/file), never by an absolute path: the same image gives the same bytes.
  std::string file = ds.paths[0];
  const size_t slash = file.find_last_of("/\\:");
  if (slash != std::string::npos) file = file.substr(slash + 1);
  o.test_image_source = ds.classes[size_t(ds.labels[0])] + "/" + file;
  return o;
}

int export_espdl(const ExportArgs& args) {
  tvh::LoadedModel m = load(args.model, args.preset, args.labels);
  const tvh::EspdlExportOptions options = espdl_options(args, m);
  const tvh::EspdlExport e = tvh::espdl_export(m, args.model, options);
  tvh::write_file_atomic(args.output, e.bytes);
  for (const std::string& line : e.mapping) std::fprintf(stderr, "  %s\n", line.c_str());
  for (const std::string& note : e.notes) std::fprintf(stderr, "tvexport: note: %s.\n", note.c_str());
  std::string expected;  // what the test vector's output is
  if (tvh::is_detector(m)) {
    const std::vector<int64_t>& dims = e.model.outputs.at(0).dims;
    expected = "its output 'grid' of " + std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + " cells of " +
               std::to_string(dims[3]) + " logits";
  } else {
    expected = "expected class " + std::to_string(e.test_class) + " '" +
               (e.test_class >= 0 && size_t(e.test_class) < m.labels.size() ? m.labels[size_t(e.test_class)] : "?") +
               "'";
  }
  std::fprintf(stderr,
               "tvexport: wrote %s (ESP-DL .espdl for the ESP32-S3, %zu nodes, %zu bytes; test input: %s, %s; "
               "checked by reading it back and running its test vectors)\n",
               args.output.c_str(), e.model.nodes.size(), e.bytes.size(), options.test_image_source.c_str(),
               expected.c_str());
  return 0;
}

// Runs FILE's embedded test vectors; 0 only when every test output is reproduced exactly. With --json
// a refusal (unreadable file, unsupported op, P4 rounding) is a JSON object too, with "refused": true.
int verify_espdl(const std::string& file, bool json) {
  nlohmann::json j;
  j["file"] = file;
  try {
    const tvh::EspdlModel model = tvh::espdl_read_file(file);
    const std::vector<std::string> problems = tvh::espdl_loader_problems(model);
    j["target"] = model.target();
    j["producer"] = model.producer_name;
    j["nodes"] = model.nodes.size();
    j["loader_problems"] = problems;
    if (!json)
      for (const std::string& p : problems) std::fprintf(stderr, "tvexport: note: %s\n", tvh::visible(p).c_str());
    const tvh::EspdlRunReport r = tvh::espdl_run_test_vectors(model);
    if (json) {
      j["passed"] = r.passed;
      j["refused"] = false;
      j["ops_run"] = r.ops_run;
      j["tensors_compared"] = r.tensors_compared;
      j["message"] = r.message;
      if (!r.passed)
        j["mismatch"] = {
            {"tensor", r.mismatch_tensor}, {"index", r.mismatch_index}, {"expected", r.expected}, {"got", r.got}};
      tvh::write_stdout(tvh::json_text(j));
    } else {
      tvh::write_stdout(std::string(r.passed ? "OK" : "MISMATCH") + ": " + tvh::visible(r.message) + "\n");
    }
    return r.passed ? 0 : 1;
  } catch (const tvh::Error& e) {
    if (!json) throw;
    j["passed"] = false;
    j["refused"] = true;
    j["message"] = e.what();
    tvh::write_stdout(tvh::json_text(j));
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

// The extensions that name each output format; the first is the one suggested.
std::vector<std::string> extensions_of(const std::string& format) {
  if (format == "espdl") return {".espdl"};
  if (format == "webmcu-bin") return {".bin"};
  return {".h", ".hpp", ".hh"};
}

int run_export(ExportArgs args) {
  if (args.model.empty()) throw tvh::UsageError("no MODEL given (see tvexport --help).");
  if (args.output.empty()) throw tvh::UsageError(args.model + ": no output given; add -o FILE (or -o - for stdout).");
  const bool named_format = !args.format.empty();
  if (!named_format) {
    std::string lower = args.output;
    for (char& c : lower) c = (char)std::tolower((unsigned char)c);
    args.format = ends_with(lower, ".espdl") ? "espdl" : (ends_with(lower, ".bin") ? "webmcu-bin" : "header");
  }
  // Options that cannot work together are usage errors (2), said before any file is read.
  if (args.output == "-" && args.format == "espdl")
    throw tvh::UsageError(args.model + ": an .espdl is binary; give -o FILE.espdl, not stdout.");
  if (args.output == "-" && args.format == "webmcu-bin")
    throw tvh::UsageError(args.model + ": --format webmcu-bin needs an output file, not stdout.");
  if (!args.test_images.empty() && args.format != "espdl")
    throw tvh::UsageError(args.model + ": --test-images only applies to an .espdl export (-o FILE.espdl).");
  if (args.output != "-") {
    // The content must match the name (a header never lands in a .tvb), and the output is never an input.
    const std::vector<std::string> exts = extensions_of(args.format);
    const std::string what = args.format == "espdl"        ? "an ESP-DL model"
                             : args.format == "webmcu-bin" ? "a raw myWeights.bin"
                                                           : "a C header";
    tvh::check_output_extension("-o", args.output, exts, what,
                                "name it MODEL" + exts[0] + " or give --format for what you want written");
    tvh::check_output({"-o", args.output}, {{"the model", args.model}, {"--test-images", args.test_images}});
  }
  if (args.format == "espdl") return export_espdl(args);
  tvh::LoadedModel m = load(args.model, args.preset, args.labels);
  // The reference firmware's formats hold its classifier network only: a detector's grid has no place there.
  if (tvh::is_detector(m) && (args.format == "webmcu-bin" || args.style == "webmcu"))
    throw tvh::Error(args.model + " is a detector (a grid of objects), and the reference firmware's " +
                     (args.format == "webmcu-bin" ? "raw myWeights.bin" : "webmcu-style header") +
                     " holds its classifier only; export it as a tinyvision-style header (-o MODEL.h) or, int8, "
                     "as MODEL.espdl.");
  if (args.format == "webmcu-bin") {
    if (m.int8)
      throw tvh::Error(args.model + ": the raw myWeights.bin holds float weights only; this is an int8 model.");
    tvh::save_raw_weights(args.output, *m.plan, m.params.data());
    std::fprintf(stderr, "tvexport: wrote %s (raw myWeights.bin, %d classes)\n", args.output.c_str(),
                 (int)m.plan->desc.num_classes);
    return 0;
  }
  if (args.style == "tinyvision") {  // a backbone's header: its layers, not its pretraining head
    int dropped = 0;
    m = tvh::backbone_for_board(std::move(m), args.model, &dropped);
    if (dropped)
      std::fprintf(stderr, "tvexport: %s is a backbone: its pretraining head (%d classes) is dropped\n",
                   args.model.c_str(), dropped);
  }
  // The board runs 2 to 16 classes: a header in its own style that it cannot run is refused; the other
  // formats (other firmware may take them) are written with a warning.
  const std::string problem = tvh::board_model_problem(m);
  if (!problem.empty() && args.style == "tinyvision")
    throw tvh::Error(args.model + ": " + problem +
                     ", so a tinyvision-style header of it cannot be baked into the board; nothing was written.");
  if (!problem.empty())
    std::fprintf(stderr, "tvexport: warning: %s: %s; the TinyVision board cannot run it\n", args.model.c_str(),
                 problem.c_str());
  std::string text;
  if (args.style == "webmcu")
    text = tvh::webmcu_header(m, args.model);
  else
    text = tvh::tinyvision_header(m, args.model, args.name, TV_VERSION);
  emit(args.output, text);
  if (args.output != "-")
    std::fprintf(stderr, "tvexport: wrote %s (%s-style header, %zu bytes)\n", args.output.c_str(), args.style.c_str(),
                 text.size());
  if (args.style == "tinyvision" && tvh::provenance_value(m.provenance, "role") == "backbone")
    std::fprintf(stderr,
                 "tvexport: the built-in backbones are such headers in common/src/tv/backbones/ "
                 "(scripts/make-backbones.sh makes them)\n");
  else if (args.style == "tinyvision" && tvh::is_detector(m))
    std::fprintf(stderr,
                 "tvexport: the header carries the detector's TASK section and threshold (in its blob, and as "
                 "%s_IS_DETECTOR, _GRID_HEIGHT, _GRID_WIDTH, _DETECT_THRESHOLD); baked into the firmware (copy it "
                 "as model.h next to the sketch in firmware/esp32/TinyVision/ and rebuild) it runs in Infer\n",
                 args.name.c_str());
  else if (args.style == "tinyvision")
    std::fprintf(stderr,
                 "tvexport: to bake it into the firmware, copy it as model.h next to the sketch "
                 "(firmware/esp32/TinyVision/ or firmware/examples/ClassifyCamera/) and rebuild\n");
  return 0;
}

int tvexport_main(int argc, char** argv) {
  CLI::App app{
      "tvexport: turn a trained model (.tvb or a raw webmcu myWeights.bin) into a C header for the "
      "ESP32-S3 or, for an int8 model, an ESP-DL .espdl; describe it with `tvexport info`; check an .espdl with "
      "`tvexport verify`. A detector (tvtrain on photos with labelled boxes) exports as a tinyvision-style header "
      "(its blob keeps the task and threshold) or, int8, as an .espdl whose output is named 'grid'; the reference "
      "firmware's formats (webmcu) hold classifiers only.",
      "tvexport"};
  app.set_version_flag("--version", std::string("tvexport ") + TV_VERSION);
  ExportArgs ex;
  app.add_option("MODEL", ex.model, "the model: a .tvb blob or a raw myWeights.bin");
  app.add_option("-o,--output", ex.output, "output file (.h, .bin, .espdl; - for stdout)");
  app.add_option("--style", ex.style, "header style: tinyvision (default) or webmcu (the reference firmware's)")
      ->check(tvcli::one_of({"tinyvision", "webmcu"}));
  app.add_option("--name", ex.name, "identifier prefix of the tinyvision-style header (default TV_MODEL)");
  app.add_option("--format", ex.format,
                 "header, webmcu-bin (raw myWeights.bin) or espdl; default from the output's extension")
      ->check(tvcli::one_of({"header", "webmcu-bin", "espdl"}));
  app.add_option("--preset", ex.preset, "the network of a raw myWeights.bin (only webmcu)")
      ->check(tvcli::preset_choice());
  app.add_option("--labels", ex.labels, "class labels of a raw myWeights.bin, comma-separated");
  app.add_option("--test-images", ex.test_images,
                 ".espdl: a dataset (folder or .zip) whose first image is embedded as the test input "
                 "(default: a synthetic picture)");

  CLI::App* info = app.add_subcommand("info", "describe a model: layers, parameters, ESP32-S3 memory, labels");
  std::string info_model, info_preset = "webmcu", info_labels, budget;
  bool json = false;
  info->add_option("MODEL", info_model, "a .tvb blob or a raw myWeights.bin")->required();
  info->add_flag("--json", json, "print one JSON object");
  info->add_option("--budget", budget,
                   "RAM budget to check, e.g. 300000, 512K, 1M: inference on the engine that runs the model (int8 "
                   "for an int8 model); exit status 1 when it does not fit");
  info->add_option("--preset", info_preset, "the network of a raw myWeights.bin (only webmcu)")
      ->check(tvcli::preset_choice());
  info->add_option("--labels", info_labels, "class labels of a raw myWeights.bin, comma-separated");

  CLI::App* verify =
      app.add_subcommand("verify",
                         "run an .espdl file's embedded test inputs through our int8 engine; exit 0 only when every "
                         "embedded output is reproduced exactly");
  std::string verify_file;
  bool verify_json = false;
  verify->add_option("FILE", verify_file, "the .espdl file (ours or Espressif's)")->required();
  verify->add_flag("--json", verify_json, "print one JSON object");
  app.require_subcommand(0, 1);

  if (const int rc = tvcli::parse(app, argc, argv, "tvexport"); rc >= 0) return rc;
  if (*verify) return verify_espdl(verify_file, verify_json);
  if (*info) {
    tvh::InfoRequest req;
    req.source = info_model;
    if (!budget.empty()) {
      req.budget = tvh::parse_budget(budget);
      req.budget_text = budget;
    }
    tvh::LoadedModel m = load(info_model, info_preset, info_labels);
    tvh::write_stdout(json ? tvh::info_json(m, req) : tvh::info_text(m, req));
    return tvh::info_fits(m, req) ? 0 : 1;
  }
  return run_export(ex);
}

}  // namespace

int main(int argc, char** argv) {
  return tvcli::run_main("tvexport", tvexport_main, argc, argv);
}
