#include "host/base/text_width.h"

#include <algorithm>

namespace tvh {

namespace {

// Decodes the character at text[i]; returns its byte length (1 for an invalid byte, *cp = 0xFFFD).
size_t decode(const std::string& text, size_t i, char32_t* cp) {
  const unsigned char c = (unsigned char)text[i];
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > text.size()) {
    *cp = 0xFFFD;
    return 1;
  }
  char32_t v = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < n; ++k) {
    const unsigned char t = (unsigned char)text[i + k];
    if ((t >> 6) != 2) {
      *cp = 0xFFFD;
      return 1;
    }
    v = (v << 6) | (t & 0x3F);
  }
  *cp = v;
  return n;
}

bool in(char32_t c, char32_t lo, char32_t hi) {
  return c >= lo && c <= hi;
}

// Columns of one character (Unicode's East Asian Width "W"/"F" ranges and the common zero-width
// ones; control characters take none).
int columns_of(char32_t c) {
  if (c < 0x20 || in(c, 0x7F, 0x9F)) return 0;
  if (in(c, 0x0300, 0x036F) || in(c, 0x0483, 0x0489) || in(c, 0x0591, 0x05BD) || in(c, 0x0610, 0x061A) ||
      in(c, 0x064B, 0x065F) || in(c, 0x0E31, 0x0E31) || in(c, 0x0E34, 0x0E3A) || in(c, 0x0E47, 0x0E4E) ||
      in(c, 0x1AB0, 0x1AFF) || in(c, 0x1DC0, 0x1DFF) || in(c, 0x200B, 0x200F) || in(c, 0x2028, 0x202E) ||
      in(c, 0x2060, 0x2064) || in(c, 0x20D0, 0x20FF) || in(c, 0xFE00, 0xFE0F) || in(c, 0xFE20, 0xFE2F) || c == 0xFEFF ||
      in(c, 0xE0100, 0xE01EF))
    return 0;
  if (in(c, 0x1100, 0x115F) || in(c, 0x231A, 0x231B) || in(c, 0x2329, 0x232A) || in(c, 0x23E9, 0x23EC) ||
      in(c, 0x25FD, 0x25FE) || in(c, 0x2614, 0x2615) || in(c, 0x2648, 0x2653) || in(c, 0x26AA, 0x26AB) ||
      in(c, 0x26BD, 0x26BE) || in(c, 0x26C4, 0x26C5) || in(c, 0x2705, 0x2705) || in(c, 0x270A, 0x270B) ||
      in(c, 0x2728, 0x2728) || in(c, 0x274C, 0x274C) || in(c, 0x2753, 0x2755) || in(c, 0x2795, 0x2797) ||
      in(c, 0x2B1B, 0x2B1C) || in(c, 0x2B50, 0x2B55) || in(c, 0x2E80, 0x303E) || in(c, 0x3041, 0x33FF) ||
      in(c, 0x3400, 0x4DBF) || in(c, 0x4E00, 0x9FFF) || in(c, 0xA000, 0xA4CF) || in(c, 0xA960, 0xA97F) ||
      in(c, 0xAC00, 0xD7A3) || in(c, 0xF900, 0xFAFF) || in(c, 0xFE10, 0xFE19) || in(c, 0xFE30, 0xFE6F) ||
      in(c, 0xFF00, 0xFF60) || in(c, 0xFFE0, 0xFFE6) || in(c, 0x1F004, 0x1F004) || in(c, 0x1F0CF, 0x1F0CF) ||
      in(c, 0x1F18E, 0x1F18E) || in(c, 0x1F191, 0x1F19A) || in(c, 0x1F200, 0x1F251) || in(c, 0x1F300, 0x1F64F) ||
      in(c, 0x1F680, 0x1F6FF) || in(c, 0x1F7E0, 0x1F7EB) || in(c, 0x1F90C, 0x1F9FF) || in(c, 0x1FA70, 0x1FAFF) ||
      in(c, 0x20000, 0x3FFFD))
    return 2;
  return 1;
}

}  // namespace

size_t text_width(const std::string& text) {
  size_t w = 0;
  for (size_t i = 0; i < text.size();) {
    char32_t c;
    i += decode(text, i, &c);
    w += (size_t)columns_of(c);
  }
  return w;
}

std::string clip_to_width(const std::string& text, size_t columns) {
  if (text_width(text) <= columns) return text;
  if (columns == 0) return std::string();
  // Keep whole characters (with their zero-width marks) while they leave a column for the "~".
  size_t used = 0, end = 0;
  for (size_t i = 0; i < text.size();) {
    char32_t c;
    const size_t n = decode(text, i, &c);
    const size_t w = (size_t)columns_of(c);
    if (w > 0 && used + w > columns - 1) break;
    used += w;
    i += n;
    end = i;
  }
  return text.substr(0, end) + "~";
}

std::string pad_right(const std::string& text, size_t columns) {
  const size_t w = text_width(text);
  return w >= columns ? text : text + std::string(columns - w, ' ');
}

std::string pad_left(const std::string& text, size_t columns) {
  const size_t w = text_width(text);
  return w >= columns ? text : std::string(columns - w, ' ') + text;
}

std::string format_table(const std::vector<std::vector<std::string>>& rows, const std::string& align) {
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], text_width(row[i]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const bool left = i < align.size() && align[i] == 'l';
      line += (i ? " " : "") + (left ? pad_right(row[i], widths[i]) : pad_left(row[i], widths[i]));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace tvh
