// tvtrain: a folder of photos (or a .zip of one) -> a trained, evaluated model (.tvb).
#include <cstdio>
#include <exception>

#include "host/error.h"
#include "tvtrain.h"

int main(int argc, char** argv) {
  try {
    return tvtrain_main(argc, argv);
  } catch (const tvh::UsageError& e) {
    std::fprintf(stderr, "tvtrain: %s\n", e.what());
    return tvh::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tvtrain: %s\n", e.what());
    return 1;
  }
}
