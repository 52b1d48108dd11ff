// The one exception type of host/: every message is a single sentence naming the file and the problem.
#pragma once
#include <stdexcept>
#include <string>

namespace tvh {

namespace detail {
// `text` with control bytes written visibly ("\\0", "\\x1b"); newline and tab kept when `keep_lines`.
// With !keep_lines also the C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F) some terminals obey.
inline std::string escape_controls(const std::string& text, bool keep_lines) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = (unsigned char)text[i];
    const unsigned char next = i + 1 < text.size() ? (unsigned char)text[i + 1] : 0;
    if (c == 0) {
      out += "\\0";
    } else if ((c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c == 0x7f) {
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    } else if (!keep_lines && c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      out += std::string("\\u00") + kHex[next >> 4] + kHex[next & 15];
      ++i;
    } else {
      out += (char)c;
    }
  }
  return out;
}
}  // namespace detail

// `text` with every control byte but newline and tab written visibly ("\\0", "\\x1b"): a name read from
// a file can hold a NUL, which would cut a C-string message short, or a terminal escape.
inline std::string visible(const std::string& text) {
  return detail::escape_controls(text, true);
}

// `text` as one line of a report: every control character written visibly, newline and tab included
// ("a\\x0ab"), so a class label or file name read from a model or a folder can neither start a line of
// its own nor drive the terminal. Every label a tool prints as text goes through it.
inline std::string one_line(const std::string& text) {
  return detail::escape_controls(text, false);
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
