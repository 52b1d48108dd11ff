// Text that users name (class folders, dataset paths, titles) through the SVG and HTML layout:
// UTF-8 width, clipping, fitting, escaping and the confusion picture never crash, never loop, never let
// a markup character through unescaped, and every fitted line fits its width.
#include <stddef.h>
#include <stdint.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "host/base/text_width.h"
#include "host/report/report.h"
#include "host/report/svg_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const double width = 20 + data[0] * 3;  // 20 .. 785 px
  const size_t classes = 2 + data[1] % 15;
  const std::string text((const char*)data + 2, size - 2);
  const std::string esc = tvh::xml_escape(text);
  if (esc.find_first_of("<>\"'") != std::string::npos) std::abort();
  const tvh::FittedText t = tvh::fit_text(text, width, 14, 10, 1 + data[1] % 4);
  for (const auto& line : t.lines) {
    // A line that cannot hold even one character is clipped to "~"; any other line fits.
    if (line != "~" && tvh::text_px(line, t.font_px) > width + 1e-9) std::abort();
  }
  (void)tvh::clip_to_width(text, data[0] % 40);
  // The confusion picture with names cut from the input.
  std::vector<std::string> names;
  const size_t step = text.size() / classes + 1;
  for (size_t c = 0; c < classes; ++c) names.push_back(text.substr(std::min(text.size(), c * step), step));
  std::vector<int> cm(classes * classes, data[0]);
  const std::string svg = tvh::confusion_svg(names, cm, text);
  if (svg.find("<script") != std::string::npos && text.find("<script") != std::string::npos) std::abort();
  return 0;
}
