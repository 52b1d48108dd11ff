// The one exception type of host/: every message is a single sentence naming the file and the problem.
#pragma once
#include <stdexcept>
#include <string>

namespace tvh {

// `text` with every control byte but newline and tab written visibly ("\\0", "\\x1b"): a name read from
// a file can hold a NUL, which would cut a C-string message short, or a terminal escape.
inline std::string visible(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const unsigned char c = (unsigned char)ch;
    if (c == 0)
      out += "\\0";
    else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    else
      out += ch;
  }
  return out;
}

// Thrown by host/ code on bad input or a failed operation; tools catch it once in main. The message is
// made visible() so that nothing read from a file can cut it short.
struct Error : std::runtime_error {
  explicit Error(const std::string& message) : std::runtime_error(visible(message)) {}
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
