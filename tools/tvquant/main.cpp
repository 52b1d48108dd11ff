// tvquant: a float .tvb -> power-of-two int8 (ESP-DL rules), and `tvquant prune` for conv channels.
#include <cstdio>
#include <cstring>
#include <exception>

#include "host/error.h"
#include "tvquant.h"

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::strcmp(argv[1], "prune") == 0) return tvquant_prune_main(argc - 1, argv + 1);
    return tvquant_main(argc, argv);
  } catch (const tvh::UsageError& e) {
    std::fprintf(stderr, "tvquant: %s\n", e.what());
    return tvh::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tvquant: %s\n", e.what());
    return 1;
  }
}
