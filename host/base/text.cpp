#include "host/base/text.h"

#include <cctype>
#include <cstdio>

#include "host/base/error.h"
#include "tv/float_text.h"

namespace tvh {

std::string fmt(const char* printf_format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, printf_format, v);
  return b;
}

std::string grouped(int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -(uint64_t)v : (uint64_t)v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = (char)std::tolower((unsigned char)c);
  return s;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& x : items) s += (s.empty() ? "" : ", ") + one_line(x);
  return "[" + s + "]";
}

std::string pct(double fraction) {
  return fmt("%.2f", 100 * fraction) + " %";
}

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

std::string g9(float v) {
  char b[tv::kFloatTextMax];
  if (!tv::format_float_g9(v, b)) return v != v ? "nan" : (v < 0 ? "-inf" : "inf");
  return b;
}

std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./=:,+@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string int8_name_for(const std::string& tvb) {
  const std::string ext = ".tvb";
  const bool has_ext = tvb.size() > ext.size() && tvb.compare(tvb.size() - ext.size(), ext.size(), ext) == 0;
  return (has_ext ? tvb.substr(0, tvb.size() - ext.size()) : tvb) + ".q8.tvb";
}

}  // namespace tvh
