// tvsim's script directives: lines of the serial input that start with '~' (see sim_hal.h). Parsing is
// a pure function so that it can be fuzzed (fuzz/fuzz_tvsim_script.cpp) and every limit checked in one
// place: a directive outside its range is refused with a sentence, never expanded (a "~tap 2000000000"
// would otherwise queue two billion touches).
#pragma once
#include <string>

namespace tvsim {

// The largest values a directive accepts.
constexpr long kMaxScriptTaps = 100;
constexpr long kMaxScriptMs = 3600L * 1000;  // one hour of simulated time
constexpr long kMaxScriptFrames = 100000;
constexpr long kMaxScriptTouchValue = 1000000;

struct ScriptDirective {
  enum Kind { Tap, Hold, Touch, Wait, Frames } kind = Tap;
  long a = 0;  // taps / milliseconds / pad value / frames
  long b = 0;  // ~touch: milliseconds
};

// Parses one directive line ("~tap 3", "~touch 20000 150", ...; trailing spaces and a CR allowed).
// Returns true and fills *out, or false with *error holding why the line is refused (naming the limit).
bool parse_script_line(const std::string& line, ScriptDirective* out, std::string* error);

}  // namespace tvsim
