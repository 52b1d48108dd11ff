// The SVG pictures lay their text out to fit: every <text> element's estimated box (host/report/svg_text.h's
// width estimate, 0.8 em above the baseline, 0.25 em below, turned by its rotate()) lies inside the
// picture, and every count lies inside its cell, at every class count from 2 to 16, with long, wide
// (CJK) and markup-like class names and long titles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "host/report/report.h"
#include "host/report/svg_text.h"

namespace {

struct Box {
  double x0, y0, x1, y1;
};

struct TextEl {
  std::string attrs, body;
};

std::string attr(const std::string& attrs, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = (" " + attrs).find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size() - 1, to = attrs.find('"', from);
  return attrs.substr(from, to - from);
}

std::string unescape(std::string s) {
  const std::pair<const char*, const char*> ents[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [e, c] : ents) {
    for (size_t p; (p = s.find(e)) != std::string::npos;) s.replace(p, std::strlen(e), c);
  }
  return s;
}

std::vector<TextEl> texts_of(const std::string& svg) {
  std::vector<TextEl> out;
  static const std::regex re("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[1], unescape((*it)[2])});
  return out;
}

// The estimated box of a text element, in picture coordinates.
Box box_of(const TextEl& t) {
  const std::string fs = attr(t.attrs, "font-size");
  const double font = fs.empty() ? 12 : std::stod(fs);
  const double w = tvh::text_px(t.body, font);
  const std::string anchor = attr(t.attrs, "text-anchor");
  const double x0 = anchor == "middle" ? -w / 2 : anchor == "end" ? -w : 0;
  double ox = 0, oy = 0, angle = 0;
  const std::string tr = attr(t.attrs, "transform");
  std::smatch m;
  static const std::regex translate("translate\\(([-0-9.]+),([-0-9.]+)\\)"), rotate("rotate\\(([-0-9.]+)\\)");
  if (std::regex_search(tr, m, translate)) {
    ox = std::stod(m[1]);
    oy = std::stod(m[2]);
  }
  if (std::regex_search(tr, m, rotate)) angle = std::stod(m[1]) * M_PI / 180;
  const std::string xs = attr(t.attrs, "x"), ys = attr(t.attrs, "y");
  const double bx = xs.empty() ? 0 : std::stod(xs), by = ys.empty() ? 0 : std::stod(ys);
  Box b{1e9, 1e9, -1e9, -1e9};
  for (double cx : {x0, x0 + w}) {
    for (double cy : {-0.8 * font, 0.25 * font}) {
      const double px = bx + cx, py = by + cy;
      const double rx = ox + px * std::cos(angle) - py * std::sin(angle);
      const double ry = oy + px * std::sin(angle) + py * std::cos(angle);
      b.x0 = std::min(b.x0, rx), b.x1 = std::max(b.x1, rx), b.y0 = std::min(b.y0, ry), b.y1 = std::max(b.y1, ry);
    }
  }
  return b;
}

bool inside(const Box& b, const Box& outer) {
  return b.x0 >= outer.x0 - 0.01 && b.y0 >= outer.y0 - 0.01 && b.x1 <= outer.x1 + 0.01 && b.y1 <= outer.y1 + 0.01;
}

Box canvas_of(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex("<svg [^>]*width=\"([0-9]+)\" height=\"([0-9]+)\"")));
  return {0, 0, std::stod(m[1]), std::stod(m[2])};
}

// Every text inside the picture; returns how many were checked.
size_t expect_texts_inside(const std::string& svg, const std::string& what) {
  const Box canvas = canvas_of(svg);
  const auto texts = texts_of(svg);
  for (const auto& t : texts) {
    const Box b = box_of(t);
    EXPECT_TRUE(inside(b, canvas)) << what << ": '" << t.body << "' at [" << b.x0 << "," << b.y0 << " .. " << b.x1
                                   << "," << b.y1 << "] outside " << canvas.x1 << "x" << canvas.y1;
  }
  return texts.size();
}

std::vector<std::string> class_names(size_t k, int style) {
  std::vector<std::string> v;
  for (size_t i = 0; i < k; ++i) {
    if (style == 0) v.push_back(std::to_string(i) + "shape");
    if (style == 1) v.push_back("class_with_a_rather_long_folder_name_" + std::to_string(i));
    if (style == 2) v.push_back("猫と犬の写真" + std::to_string(i));
    if (style == 3) v.push_back("<b>&\"W'" + std::to_string(i));
  }
  return v;
}

}  // namespace

TEST(SvgLayout, ConfusionTextFitsAtEveryClassCount) {
  const std::string titles[] = {"tinyvision on datasets/shapes (validation images)",
                                "webmcu on /home/someone/Pictures/my very long dataset folder name/with/many/levels "
                                "(validation images)",
                                "x"};
  for (size_t k = 2; k <= 16; ++k) {
    for (int style = 0; style < 4; ++style) {
      for (const auto& title : titles) {
        std::vector<int> cm(k * k);
        for (size_t i = 0; i < k * k; ++i) cm[i] = (int)(i % 7 == 0 ? 1234567 : i);
        const std::string svg = tvh::confusion_svg(class_names(k, style), cm, title);
        const std::string what = std::to_string(k) + " classes, style " + std::to_string(style) + ", " + title;
        // Title, axis titles, 2k class names, k*k counts, at least one caption line.
        EXPECT_GE(expect_texts_inside(svg, what), 3 + 2 * k + k * k + 1) << what;
        // Each count inside its cell: the rect right before it.
        static const std::regex cell(
            "<rect x=\"([0-9]+)\" y=\"([0-9]+)\" width=\"([0-9]+)\" height=\"([0-9]+)\"[^>]*/>"
            "<text([^>]*)>([^<]*)</text>");
        size_t cells = 0;
        for (auto it = std::sregex_iterator(svg.begin(), svg.end(), cell); it != std::sregex_iterator();
             ++it, ++cells) {
          const auto& m = *it;
          const double x = std::stod(m[1]), y = std::stod(m[2]), w = std::stod(m[3]), h = std::stod(m[4]);
          const Box b = box_of({m[5], m[6]});
          EXPECT_TRUE(inside(b, {x, y, x + w, y + h})) << what << ": count " << m[6] << " outside its cell";
        }
        EXPECT_EQ(cells, k * k) << what;
        // Nothing is cut silently: the whole title is there unless a line ends in "~".
        if (title == "x") {
          EXPECT_NE(svg.find(">x</text>"), std::string::npos);
        }
      }
    }
  }
}

TEST(SvgLayout, ConfusionCellsLinkWhenAsked) {
  const std::vector<int> cm = {3, 1, 0, 2};
  const std::string svg = tvh::confusion_svg(
      {"a", "b"}, cm, "t", [](size_t i, size_t j) { return "#cell-" + std::to_string(i) + "-" + std::to_string(j); });
  EXPECT_NE(svg.find("<a href=\"#cell-0-0\">"), std::string::npos);
  EXPECT_NE(svg.find("<a href=\"#cell-0-1\">"), std::string::npos);
  EXPECT_EQ(svg.find("#cell-1-0"), std::string::npos) << "an empty cell links nowhere";
  EXPECT_EQ(tvh::confusion_svg({"a", "b"}, cm, "t").find("<a "), std::string::npos);
}

TEST(SvgLayout, CurveTextFits) {
  std::vector<tvh::EpochRecord> h;
  for (int e = 1; e <= 30; ++e) {
    tvh::EpochRecord r;
    r.epoch = e;
    r.train_loss = 2.0 / e;
    r.train_acc = 1 - 1.0 / (e + 1);
    r.val_loss = 2.5 / e;
    r.val_acc = 1 - 1.5 / (e + 2);
    h.push_back(r);
  }
  const std::string long_title(300, 'W');
  for (const std::string& title : {std::string("tinyvision on datasets/shapes"), long_title,
                                   std::string("webmcu on ") + std::string(40, 'a') + " " + std::string(120, 'b')}) {
    for (int kept : {0, 1, 15, 30}) expect_texts_inside(tvh::curve_svg(h, title, kept), title.substr(0, 20));
  }
}

TEST(SvgText, FitShrinksThenWrapsThenClips) {
  const tvh::FittedText one = tvh::fit_text("short", 200, 14, 10);
  EXPECT_EQ(one.font_px, 14);
  ASSERT_EQ(one.lines.size(), 1u);
  const tvh::FittedText shrunk = tvh::fit_text(std::string(25, 'a'), tvh::text_px(std::string(25, 'a'), 11), 14, 10);
  EXPECT_EQ(shrunk.font_px, 11);
  const tvh::FittedText wrapped = tvh::fit_text("one two three four five six seven", 60, 14, 10, 10);
  EXPECT_GT(wrapped.lines.size(), 2u);
  for (const auto& l : wrapped.lines) EXPECT_LE(tvh::text_px(l, 10), 60);
  const tvh::FittedText clipped = tvh::fit_text("one two three four five six seven", 60, 14, 10, 2);
  ASSERT_EQ(clipped.lines.size(), 2u);
  EXPECT_EQ(clipped.lines.back().back(), '~');
  EXPECT_EQ(tvh::xml_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}
