// tvquant: post-training quantization to ESP-DL power-of-two int8, and structured pruning.
#include <CLI/CLI.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"tvquant: quantize a float .tvb to power-of-two int8 (ESP-DL rules) and prune conv channels.\n"
               "(quantization arrives with issue [3/5]; this build only answers --help and --version)"};
  app.set_version_flag("--version", std::string("tvquant ") + TV_VERSION);
  std::string model;
  app.add_option("model", model, "Float model (.tvb)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::fprintf(stderr, "tvquant: quantization is not implemented in this build yet.\n");
  return 2;
}
