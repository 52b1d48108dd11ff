// The one exception type of host/: every message is a single sentence naming the file and the problem.
#pragma once
#include <stdexcept>
#include <string>

namespace tvh {

// Thrown by host/ code on bad input or a failed operation; tools catch it once in main.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A command line that cannot work as given (a missing or contradictory option): exit status 2.
struct UsageError : Error {
  using Error::Error;
};

// The exit statuses every tool (tvtrain, tvquant, tvexport, tvsim) uses.
constexpr int kExitOk = 0;       // success
constexpr int kExitFailure = 1;  // bad data, a refused model, a model that does not fit, a failed write
constexpr int kExitUsage = 2;    // the command line is wrong
// The sentence each --help ends with.
constexpr const char* kExitStatusHelp =
    "Exit status: 0 success, 1 failure (bad data, refused model, does not fit, cannot write), 2 usage error.";

}  // namespace tvh
