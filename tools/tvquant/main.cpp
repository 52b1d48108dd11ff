// tvquant: a float .tvb -> power-of-two int8 (ESP-DL rules), and `tvquant prune` for conv channels.
#include <cstring>

#include "tools/common/cli.h"
#include "tvquant.h"

namespace {
int tvquant_or_prune(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "prune") == 0) return tvquant_prune_main(argc - 1, argv + 1);
  return tvquant_main(argc, argv);
}
}  // namespace

int main(int argc, char** argv) {
  return tvcli::run_main("tvquant", tvquant_or_prune, argc, argv);
}
