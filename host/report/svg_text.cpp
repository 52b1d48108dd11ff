#include "host/report/svg_text.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "host/base/text.h"
#include "host/base/text_width.h"

namespace tvh {

namespace {
constexpr double kEmPerColumn = 0.62;

// The longest prefix of `text` that fits in max_px at font_px ("~"-terminated when cut).
std::string clip_to_px(const std::string& text, double max_px, double font_px) {
  if (text_px(text, font_px) <= max_px) return text;
  const double columns = std::floor(max_px / (kEmPerColumn * font_px));
  return clip_to_width(text, columns < 1 ? 1 : (size_t)columns);
}
}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string shorten_middle(const std::string& text, size_t max_bytes) {
  const size_t limit = std::max<size_t>(max_bytes, 8);
  if (text.size() <= limit) return text;
  size_t head = limit / 3, tail = text.size() - (limit - head - 3);
  while (head > 0 && ((unsigned char)text[head] & 0xC0) == 0x80) --head;
  while (tail < text.size() && ((unsigned char)text[tail] & 0xC0) == 0x80) ++tail;
  return text.substr(0, head) + "..." + text.substr(tail);
}

std::string escape_shortened(const std::string& text, size_t max_bytes) {
  size_t n = std::max<size_t>(max_bytes, 8);
  for (;;) {
    std::string e = xml_escape(shorten_middle(text, n));
    if (e.size() <= 2 * max_bytes || n <= 8) return e;
    n = std::max<size_t>(8, std::min(n - 1, n * 2 * max_bytes / e.size()));
  }
}

std::string clip_label(const std::string& text, size_t columns, size_t max_bytes) {
  std::string out = clip_to_width(text, columns);
  if (out.size() <= max_bytes) return out;
  size_t end = max_bytes > 0 ? max_bytes - 1 : 0;
  while (end > 0 && ((unsigned char)out[end] & 0xC0) == 0x80) --end;
  return out.substr(0, end) + "~";
}

double text_px(const std::string& text, double font_px) {
  return kEmPerColumn * font_px * (double)text_width(text);
}

FittedText fit_text(const std::string& text, double max_px, double max_font, double min_font, size_t max_lines) {
  FittedText t;
  for (double f = max_font; f >= min_font; f -= 1) {
    if (text_px(text, f) <= max_px) {
      t.font_px = f;
      t.lines = {text};
      return t;
    }
  }
  t.font_px = min_font;
  std::istringstream words(text);
  std::string word, line;
  while (words >> word) {
    const std::string joined = line.empty() ? word : line + " " + word;
    if (text_px(joined, min_font) <= max_px || line.empty()) {
      line = joined;
      continue;
    }
    t.lines.push_back(clip_to_px(line, max_px, min_font));
    line = word;
  }
  if (!line.empty() || t.lines.empty()) t.lines.push_back(clip_to_px(line, max_px, min_font));
  if (max_lines == 0) max_lines = 1;
  if (t.lines.size() > max_lines) {
    std::string last = t.lines[max_lines - 1];
    t.lines.resize(max_lines);
    // Mark the cut: the last kept line ends in "~" (clipped to leave room for it).
    t.lines.back() = clip_to_px(last + " ~", max_px, min_font);
  }
  return t;
}

std::string svg_lines(const FittedText& t, double x, double y, const char* anchor, const std::string& attrs) {
  std::ostringstream s;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    s << "<text x=\"" << fmt("%.1f", x) << "\" y=\"" << fmt("%.1f", y + 1.25 * t.font_px * (double)i)
      << "\" text-anchor=\"" << anchor << "\" font-size=\"" << fmt("%.0f", t.font_px) << "\"" << attrs << ">"
      << xml_escape(t.lines[i]) << "</text>\n";
  }
  return s.str();
}

}  // namespace tvh
