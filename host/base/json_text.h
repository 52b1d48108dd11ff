// Results as JSON text (--json on stdout): the one place that says how they are written.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "host/base/interval.h"

namespace tvh {

// `j` with a 2-space indent and a final newline. A string that is not UTF-8 (a file or folder name in
// another encoding) has its bad bytes written as U+FFFD: never an exception once the work is done.
inline std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The Wilson 95 % interval of an accuracy as [lo, hi] (the *_accuracy_interval fields beside every
// accuracy in --json).
inline nlohmann::json interval_json(long correct, long total) {
  const auto ci = wilson_interval(correct, total);
  return nlohmann::json::array({ci.first, ci.second});
}

}  // namespace tvh
