#include "script.h"

#include <cctype>
#include <vector>

namespace tvsim {

namespace {

// Splits on spaces and tabs.
std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// A whole number in [lo, hi] (decimal digits only, at most 10 of them: no overflow).
bool number_in(const std::string& text, long lo, long hi, long* out) {
  if (text.empty() || text.size() > 10) return false;
  long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

}  // namespace

bool parse_script_line(const std::string& line, ScriptDirective* out, std::string* error) {
  const std::vector<std::string> w = words_of(line);
  auto refuse = [&](const std::string& why) {
    *error = why;
    return false;
  };
  if (w.empty() || w[0].size() < 2 || w[0][0] != '~')
    return refuse("not a directive (~tap, ~hold, ~touch, ~wait, ~frames)");
  const std::string word = w[0].substr(1);
  auto arg = [&](size_t i, long lo, long hi, long* v, const char* what) {
    if (i >= w.size()) return refuse(std::string("~") + word + " needs " + what);
    if (!number_in(w[i], lo, hi, v))
      return refuse(std::string("~") + word + ": " + what + " must be a whole number from " + std::to_string(lo) +
                    " to " + std::to_string(hi));
    return true;
  };
  ScriptDirective d;
  size_t expected = 2;
  if (word == "tap") {
    d.kind = ScriptDirective::Tap;
    d.a = 1;
    expected = w.size() > 1 ? 2 : 1;
    if (w.size() > 1 && !arg(1, 1, kMaxScriptTaps, &d.a, "the tap count")) return false;
  } else if (word == "hold") {
    d.kind = ScriptDirective::Hold;
    if (!arg(1, 1, kMaxScriptMs, &d.a, "the milliseconds")) return false;
  } else if (word == "touch") {
    d.kind = ScriptDirective::Touch;
    expected = 3;
    if (!arg(1, 0, kMaxScriptTouchValue, &d.a, "the pad value") || !arg(2, 1, kMaxScriptMs, &d.b, "the milliseconds"))
      return false;
  } else if (word == "wait") {
    d.kind = ScriptDirective::Wait;
    if (!arg(1, 0, kMaxScriptMs, &d.a, "the milliseconds")) return false;
  } else if (word == "frames") {
    d.kind = ScriptDirective::Frames;
    if (!arg(1, 1, kMaxScriptFrames, &d.a, "the frame count")) return false;
  } else {
    return refuse("unknown directive '~" + word + "' (~tap, ~hold, ~touch, ~wait, ~frames)");
  }
  if (w.size() > expected) return refuse("~" + word + " has more values than it takes");
  *out = d;
  return true;
}

}  // namespace tvsim
