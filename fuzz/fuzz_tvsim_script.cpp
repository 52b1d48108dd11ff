// libFuzzer target: tvsim's serial input. Lines starting with '~' are script directives
// (firmware/hal_sim/script.h); each is parsed as tvsim parses it, and an accepted directive must lie
// within the documented limits (so that "~tap 2000000000" can never queue billions of touches).
// Anything else is serial bytes for the app, which only compares them with a few letters.
#include <stddef.h>
#include <stdint.h>

#include <string>

#include "script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  while (pos < input.size()) {
    size_t nl = input.find('\n', pos);
    if (nl == std::string::npos) nl = input.size();
    const std::string line = input.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line[0] != '~') continue;
    tvsim::ScriptDirective d;
    std::string why;
    if (!tvsim::parse_script_line(line, &d, &why)) {
      if (why.empty()) __builtin_trap();  // a refusal always says why
      continue;
    }
    switch (d.kind) {
      case tvsim::ScriptDirective::Tap:
        if (d.a < 1 || d.a > tvsim::kMaxScriptTaps) __builtin_trap();
        break;
      case tvsim::ScriptDirective::Hold:
      case tvsim::ScriptDirective::Wait:
        if (d.a < 0 || d.a > tvsim::kMaxScriptMs) __builtin_trap();
        break;
      case tvsim::ScriptDirective::Touch:
        if (d.a < 0 || d.a > tvsim::kMaxScriptTouchValue || d.b < 1 || d.b > tvsim::kMaxScriptMs) __builtin_trap();
        break;
      case tvsim::ScriptDirective::Frames:
        if (d.a < 1 || d.a > tvsim::kMaxScriptFrames) __builtin_trap();
        break;
    }
  }
  return 0;
}
