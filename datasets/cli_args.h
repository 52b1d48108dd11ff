// Command-line helper shared by the dataset writers (generate.cpp, fashion_mnist.cpp).
#pragma once
#include <cstdlib>
#include <string>

#include "host/error.h"

namespace tvdata {

// The whole number `text` given for `flag`, within [lo, hi]; throws tvh::Error naming the flag otherwise.
inline int parse_int(const std::string& flag, const char* text, long long lo, long long hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi)
    throw tvh::Error(flag + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", not '" + text + "'.");
  return (int)v;
}

// A word that matched no option: the output folder the first time; an unknown option or a second
// folder throws tvh::Error saying so.
inline void take_out_dir(const std::string& arg, std::string* out_dir) {
  if (!arg.empty() && arg[0] == '-') throw tvh::Error("unknown option '" + arg + "' (see --help).");
  if (!out_dir->empty()) throw tvh::Error("only one output folder may be given, not also '" + arg + "'.");
  *out_dir = arg;
}

}  // namespace tvdata
