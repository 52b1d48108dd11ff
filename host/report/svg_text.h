// Text laid out to fit in the SVG pictures and the HTML report: an estimate of how wide a string is
// drawn in a sans-serif font, and titles shrunk or wrapped to a width, so no picture cuts its text.
#pragma once
#include <stddef.h>

#include <string>
#include <vector>

namespace tvh {

// `text` with the five XML special characters (<, >, &, ", ') escaped: safe in element text and in
// quoted attribute values of SVG and HTML.
std::string xml_escape(const std::string& text);

// `text` whole when it has at most max_bytes bytes, else its start and end around "...", cut between UTF-8
// characters: at most max(max_bytes, 8) bytes.
std::string shorten_middle(const std::string& text, size_t max_bytes);
// `text` shortened (shorten_middle) to max_bytes and XML-escaped; shortened further when its escapes
// would take it over 2 x max_bytes (a name full of '&' or quotes), so that its size is bounded by its limit.
std::string escape_shortened(const std::string& text, size_t max_bytes);
// `text` clipped to `columns` terminal columns (clip_to_width) and to max_bytes bytes (zero-width marks take
// bytes but no column), a cut marked with "~".
std::string clip_label(const std::string& text, size_t columns, size_t max_bytes);

// An upper estimate of the width in pixels of `text` drawn in a sans-serif font of `font_px` pixels:
// 0.62 em per terminal column (host/base/text_width.h), so a wide (CJK) character counts 1.24 em.
double text_px(const std::string& text, double font_px);

// Text fitted to a width: the largest font size from `max_font` down to `min_font` (1 px steps) at
// which it takes one line; otherwise at `min_font`, wrapped at spaces onto at most `max_lines` lines,
// each line (and an over-long word) clipped with "~" to fit.
struct FittedText {
  double font_px = 0;
  std::vector<std::string> lines;
  // Height of the block in pixels (1.25 x the font size per line).
  double height() const { return 1.25 * font_px * (double)lines.size(); }
};
FittedText fit_text(const std::string& text, double max_px, double max_font, double min_font, size_t max_lines = 3);

// The fitted text as SVG <text> elements: the first baseline at `y`, lines 1.25 font sizes apart,
// anchored at x by `anchor` ("start", "middle" or "end"); `attrs` is added to each element (e.g. fill).
std::string svg_lines(const FittedText& t, double x, double y, const char* anchor, const std::string& attrs = "");

}  // namespace tvh
