// tvexport: a trained model (.tvb, or the reference's raw myWeights.bin) -> a C header, the raw
// myWeights.bin, or (to come) an ESP-DL .espdl; `tvexport info` describes a model and its memory.
// Results go to stdout, logs to stderr; errors are one sentence naming the file, exit 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "host/error.h"
#include "host/export.h"
#include "host/files.h"
#include "host/model_io.h"

namespace {

struct ExportArgs {
  std::string model, output, style = "tinyvision", name = "TV_MODEL", format, preset = "webmcu", labels;
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
  tvh::LoadedModel m = tvh::load_model(path, raw);
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
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    tvh::write_file_atomic(path, text);
  }
}

// ---- .espdl (ESP-DL) export and verification: the stub point for the ESP-DL work. Replace these two
// functions (keep their signatures); until then both say so and exit non-zero.
int export_espdl(const ExportArgs& args) {
  std::fprintf(stderr, "tvexport: %s: .espdl export is not implemented yet.\n", args.output.c_str());
  return 2;
}
int verify_espdl(const std::string& file) {
  std::fprintf(stderr, "tvexport: %s: verify is not implemented yet.\n", file.c_str());
  return 2;
}

int run_export(ExportArgs args) {
  if (args.model.empty()) throw tvh::Error("tvexport: no MODEL given (see tvexport --help).");
  if (args.output.empty()) throw tvh::Error(args.model + ": no output given; add -o FILE (or -o - for stdout).");
  if (args.format.empty())
    args.format =
        ends_with(args.output, ".espdl") ? "espdl" : (ends_with(args.output, ".bin") ? "webmcu-bin" : "header");
  if (args.format == "espdl") return export_espdl(args);
  tvh::LoadedModel m = load(args.model, args.preset, args.labels);
  if (args.format == "webmcu-bin") {
    if (args.output == "-") throw tvh::Error(args.model + ": --format webmcu-bin needs an output file, not stdout.");
    if (m.int8)
      throw tvh::Error(args.model + ": the raw myWeights.bin holds float weights only; this is an int8 model.");
    tvh::save_raw_weights(args.output, *m.plan, m.params.data());
    std::fprintf(stderr, "tvexport: wrote %s (raw myWeights.bin, %d classes)\n", args.output.c_str(),
                 (int)m.plan->desc.num_classes);
    return 0;
  }
  std::string text;
  if (args.style == "webmcu")
    text = tvh::webmcu_header(m, args.model);
  else
    text = tvh::tinyvision_header(m, args.model, args.name, TV_VERSION);
  emit(args.output, text);
  if (args.output != "-")
    std::fprintf(stderr, "tvexport: wrote %s (%s-style header, %zu bytes)\n", args.output.c_str(), args.style.c_str(),
                 text.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tvexport: turn a trained model (.tvb or a raw webmcu myWeights.bin) into a C header for the "
      "ESP32-S3, or describe it with `tvexport info`.",
      "tvexport"};
  app.set_version_flag("--version", std::string("tvexport ") + TV_VERSION);
  ExportArgs ex;
  app.add_option("MODEL", ex.model, "the model: a .tvb blob or a raw myWeights.bin");
  app.add_option("-o,--output", ex.output, "output file (.h, .bin, .espdl; - for stdout)");
  app.add_option("--style", ex.style, "header style: tinyvision (default) or webmcu (the reference firmware's)")
      ->check(CLI::IsMember({"tinyvision", "webmcu"}));
  app.add_option("--name", ex.name, "identifier prefix of the tinyvision-style header (default TV_MODEL)");
  app.add_option("--format", ex.format,
                 "header, webmcu-bin (raw myWeights.bin) or espdl; default from the output's extension")
      ->check(CLI::IsMember({"header", "webmcu-bin", "espdl"}));
  app.add_option("--preset", ex.preset, "the network of a raw myWeights.bin (only webmcu)");
  app.add_option("--labels", ex.labels, "class labels of a raw myWeights.bin, comma-separated");

  CLI::App* info = app.add_subcommand("info", "describe a model: layers, parameters, ESP32-S3 memory, labels");
  std::string info_model, info_preset = "webmcu", info_labels, budget;
  bool json = false;
  info->add_option("MODEL", info_model, "a .tvb blob or a raw myWeights.bin")->required();
  info->add_flag("--json", json, "print one JSON object");
  info->add_option("--budget", budget, "RAM budget to check, e.g. 300000, 512K, 1M");
  info->add_option("--preset", info_preset, "the network of a raw myWeights.bin (only webmcu)");
  info->add_option("--labels", info_labels, "class labels of a raw myWeights.bin, comma-separated");

  CLI::App* verify = app.add_subcommand("verify", "check an .espdl file (not implemented yet)");
  std::string verify_file;
  verify->add_option("FILE", verify_file, "the .espdl file")->required();
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*verify) return verify_espdl(verify_file);
    if (*info) {
      tvh::InfoRequest req;
      req.source = info_model;
      if (!budget.empty()) {
        req.budget = tvh::parse_budget(budget);
        req.budget_text = budget;
      }
      tvh::LoadedModel m = load(info_model, info_preset, info_labels);
      std::string text = json ? tvh::info_json(m, req) : tvh::info_text(m, req);
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    return run_export(ex);
  } catch (const tvh::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tvexport: %s\n", e.what());
    return 1;
  }
}
