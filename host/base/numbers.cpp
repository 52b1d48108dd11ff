#include "host/base/numbers.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "host/base/error.h"
#include "host/base/suggest.h"

namespace tvh {

namespace {

// The shortest text that reads back as v ("1e-09", "0.95", "10", "100000").
std::string shortest(double v) {
  char buf[40];
  const bool plain_range = std::fabs(v) >= 1e-4 && std::fabs(v) < 1e15;  // written without an exponent
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v && !(plain_range && std::strchr(buf, 'e'))) break;
  }
  return buf;
}

}  // namespace

std::string whole_number_problem(const std::string& text, uint64_t lo, uint64_t hi) {
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  bool digits = !text.empty();
  for (char ch : text) digits = digits && ch >= '0' && ch <= '9';
  uint64_t v = 0;
  for (size_t i = 0; digits && i < text.size(); ++i) {
    const uint64_t d = (uint64_t)(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return text + " is too large: give " + range + ".";
    v = v * 10 + d;
  }
  if (!digits) return "'" + visible(text) + "' is not " + range + ".";
  if (v < lo || v > hi) return text + " is out of range: give " + range + ".";
  return "";
}

std::string real_number_problem(const std::string& text, double lo, double hi) {
  const std::string range = "a number from " + shortest(lo) + " to " + shortest(hi);
  // strtod also reads "nan", "inf", "infinity" and hex floats: only digits, one point, an exponent.
  bool plain = !text.empty();
  for (char ch : text)
    plain = plain && ((ch >= '0' && ch <= '9') || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-');
  char* end = nullptr;
  errno = 0;
  const double v = plain ? std::strtod(text.c_str(), &end) : 0.0;
  if (!plain || end == text.c_str() || *end != '\0') return "'" + visible(text) + "' is not " + range + ".";
  if (errno == ERANGE || !std::isfinite(v) || v < lo || v > hi) return text + " is out of range: give " + range + ".";
  return "";
}

std::string choice_problem(const std::string& text, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (text == n) return "";
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  const std::string near = nearest_name(text, names);
  return "'" + visible(text) + "' is not one of " + list + (near.empty() ? "." : "; did you mean " + near + "?");
}

uint64_t parse_whole_number(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi) {
  const std::string problem = whole_number_problem(text, lo, hi);
  if (!problem.empty()) throw UsageError(flag + ": " + problem);
  return std::strtoull(text.c_str(), nullptr, 10);
}

double parse_real_number(const std::string& flag, const std::string& text, double lo, double hi) {
  const std::string problem = real_number_problem(text, lo, hi);
  if (!problem.empty()) throw UsageError(flag + ": " + problem);
  return std::strtod(text.c_str(), nullptr);
}

}  // namespace tvh
