// The one exception type of host/: every message is a single sentence naming the file and the problem.
#pragma once
#include <stdexcept>
#include <string>

namespace tvh {

// Thrown by host/ code on bad input or a failed operation; tools catch it once in main.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tvh
