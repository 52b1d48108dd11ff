#include "host/report/report.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "host/base/error.h"
#include "host/base/text.h"
#include "host/base/text_width.h"
#include "host/report/svg_text.h"

namespace tvh {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::string human_bytes(size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (bytes < 1024 * 1024) return fmt("%.1f KB", bytes / 1024.0);
  return fmt("%.2f MB", bytes / (1024.0 * 1024.0));
}

std::string skipped_text(const std::vector<SkippedFile>& skipped, size_t show) {
  if (skipped.empty()) return "";
  std::map<std::string, size_t> by_reason;
  for (const auto& s : skipped) ++by_reason[s.reason];
  std::string out = std::to_string(skipped.size()) + " file(s) not used:";
  bool first = true;
  for (const auto& [reason, n] : by_reason) {
    std::string words = reason;
    std::replace(words.begin(), words.end(), '_', ' ');
    out += std::string(first ? " " : ", ") + std::to_string(n) + " " + words;
    first = false;
  }
  for (size_t i = 0; i < skipped.size() && i < show; ++i) out += "\n  skipped " + skipped[i].message;
  if (skipped.size() > show) {
    out += "\n  ... and " + std::to_string(skipped.size() - show) + " more (every name is in --json)";
  }
  return out;
}

namespace {
// The class names as one line each (tvh::one_line): control characters written visibly.
std::vector<std::string> one_line_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(one_line(n));
  return out;
}
}  // namespace

std::string confusion_text(const std::vector<std::string>& names, const std::vector<int>& cm) {
  const std::vector<std::string> classes = one_line_names(names);  // a folder name may hold a newline
  // Widths in terminal columns (class names may be in any script): row names in full, column heads
  // clipped to 8 columns between characters.
  const size_t k = classes.size();
  size_t w = 6;
  for (const auto& c : classes) w = std::max(w, text_width(c) + 1);
  std::ostringstream o;
  o << "confusion matrix (rows: true class, columns: predicted)\n";
  o << std::string(w, ' ');
  for (size_t j = 0; j < k; ++j) o << " " << pad_left(clip_to_width(classes[j], 8), 8);
  o << "   accuracy\n";
  for (size_t i = 0; i < k; ++i) {
    o << pad_right(classes[i], w);
    int row = 0;
    for (size_t j = 0; j < k; ++j) {
      row += cm[i * k + j];
      o << " " << pad_left(std::to_string(cm[i * k + j]), 8);
    }
    o << "   " << (row ? fmt("%5.1f %%", 100.0 * cm[i * k + i] / row) : std::string("    -")) << "  (" << cm[i * k + i]
      << "/" << row << ")\n";
  }
  return o.str();
}

std::string curve_path_for(const std::string& model_path) {
  std::string base = model_path;
  size_t slash = base.find_last_of('/');
  size_t dot = base.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) base = base.substr(0, dot);
  return base + ".curve.svg";
}

namespace {

// An SVG document's opening: size, white background, the fitted title centred on top (first baseline
// at y = 22).
void svg_open(std::ostringstream& s, int W, int H, const FittedText& title) {
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
    << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << svg_lines(title, W / 2.0, 22, "middle");
}

// The title of a picture W pixels wide: 14 px, down to 10 px, then wrapped onto up to 3 lines (shortened
// to 300 bytes first: zero-width marks take no room but bytes).
FittedText fit_title(const std::string& title, int W) {
  return fit_text(shorten_middle(title, 300), W - 20, 14, 10, 3);
}

// A class name in a picture: 24 columns, 72 bytes.
std::string picture_name(const std::string& name) {
  return clip_label(name, 24, 72);
}

// The points of one series of the curve, at most 4 a pixel column (the first, lowest, highest and last of
// the epochs falling in it, in epoch order): the same line at any number of epochs, in bounded bytes.
std::string thinned_points(const std::vector<std::pair<double, double>>& xy) {
  std::ostringstream pts;
  for (size_t a = 0; a < xy.size();) {
    size_t b = a, lo = a, hi = a;
    while (b < xy.size() && std::floor(xy[b].first) == std::floor(xy[a].first)) {
      if (xy[b].second < xy[lo].second) lo = b;
      if (xy[b].second > xy[hi].second) hi = b;
      ++b;
    }
    size_t keep[4] = {a, std::min(lo, hi), std::max(lo, hi), b - 1};
    for (size_t q = 0; q < 4; ++q) {
      if (q > 0 && keep[q] == keep[q - 1]) continue;
      pts << fmt("%.1f", xy[keep[q]].first) << "," << fmt("%.1f", xy[keep[q]].second) << " ";
    }
    a = b;
  }
  return pts.str();
}

// A round tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals over [0, span].
double nice_step(double span, int ticks) {
  const double raw = span / std::max(1, ticks);
  const double mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-12))));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

// A tick label without trailing zeros: 0.25, 1, 1.5, 20.
std::string tick_label(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return b;
}

}  // namespace

std::string curve_svg(const std::vector<EpochRecord>& h, const std::string& title, int kept_epoch) {
  const int W = 720, L = 72, R = 72, B = 56, plot_h = 286;
  const FittedText title_fit = fit_title(title, W);
  // Below the title: the legend row (baseline legend_y), the kept-epoch label, then the plot.
  const int title_bottom = 22 + (int)std::ceil(title_fit.height() - title_fit.font_px);
  const int legend_y = title_bottom + 26, T = legend_y + 30, H = T + plot_h + B;
  const int pw = W - L - R, ph = plot_h;
  const size_t n = h.size();
  bool has_val = false, has_val_loss = false;
  double max_loss = 1e-9;
  for (const auto& e : h) {
    max_loss = std::max(max_loss, e.train_loss);
    if (e.val_loss >= 0) max_loss = std::max(max_loss, e.val_loss), has_val_loss = true;
    if (e.val_acc >= 0) has_val = true;
  }
  const double loss_step = nice_step(max_loss, 5);
  const double loss_top = loss_step * std::ceil(max_loss / loss_step - 1e-9);
  const int first_epoch = n ? h.front().epoch : 1, last_epoch = n ? h.back().epoch : 1;
  auto x_of = [&](double epoch) {
    return L + (last_epoch == first_epoch ? pw / 2.0 : pw * (epoch - first_epoch) / (double)(last_epoch - first_epoch));
  };
  auto y_of = [&](double frac) { return T + ph * (1.0 - frac); };
  std::ostringstream s;
  svg_open(s, W, H, title_fit);
  // Grid and left ticks (loss, round values), right ticks (accuracy, every 20 %).
  for (double v = 0; v <= loss_top + 1e-9; v += loss_step) {
    const double y = y_of(v / loss_top);
    s << "<line x1=\"" << L << "\" y1=\"" << fmt("%.1f", y) << "\" x2=\"" << L + pw << "\" y2=\"" << fmt("%.1f", y)
      << "\" stroke=\"#e4e4e4\"/>\n";
    s << "<text x=\"" << L - 6 << "\" y=\"" << fmt("%.1f", y + 4) << "\" text-anchor=\"end\">" << tick_label(v)
      << "</text>\n";
  }
  for (int p = 0; p <= 100; p += 20) {
    s << "<text x=\"" << L + pw + 6 << "\" y=\"" << fmt("%.1f", y_of(p / 100.0) + 4) << "\">" << p << "</text>\n";
  }
  const double epoch_step = std::max(1.0, nice_step(last_epoch - first_epoch, 8));
  for (double e = std::ceil(first_epoch / epoch_step) * epoch_step; e <= last_epoch + 1e-9; e += epoch_step) {
    s << "<text x=\"" << fmt("%.1f", x_of(e)) << "\" y=\"" << T + ph + 18 << "\" text-anchor=\"middle\">"
      << tick_label(e) << "</text>\n";
    s << "<line x1=\"" << fmt("%.1f", x_of(e)) << "\" y1=\"" << T + ph << "\" x2=\"" << fmt("%.1f", x_of(e))
      << "\" y2=\"" << T + ph + 5 << "\" stroke=\"#333\"/>\n";
  }
  s << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#333\"/>\n";
  // Axis titles.
  s << "<text x=\"" << L + pw / 2 << "\" y=\"" << H - 14 << "\" text-anchor=\"middle\">epoch</text>\n";
  s << "<text transform=\"translate(18," << T + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << "loss (mean cross-entropy)</text>\n";
  s << "<text transform=\"translate(" << W - 16 << "," << T + ph / 2 << ") rotate(90)\" text-anchor=\"middle\">"
    << "accuracy (%)</text>\n";
  // The kept epoch: a dashed vertical line, its label above the plot.
  const int kept = kept_epoch > 0 ? kept_epoch : last_epoch;
  if (n) {
    const double x = x_of(kept);
    s << "<line x1=\"" << fmt("%.1f", x) << "\" y1=\"" << T << "\" x2=\"" << fmt("%.1f", x) << "\" y2=\"" << T + ph
      << "\" stroke=\"#7f7f7f\" stroke-dasharray=\"3,3\"/>\n";
    const std::string label =
        "kept: epoch " + std::to_string(kept) + (kept_epoch > 0 ? " (best validation)" : " (last)");
    const double half = text_px(label, 12) / 2;
    const double lx = std::min(std::max(x, L + half), L + pw - half);
    s << "<text x=\"" << fmt("%.1f", lx) << "\" y=\"" << T - 8 << "\" text-anchor=\"middle\" fill=\"#555\">" << label
      << "</text>\n";
  }
  struct Series {
    const char* name;
    const char* color;
    const char* dash;
    bool show;
    double (*value)(const EpochRecord&, double top);
  };
  const Series series[] = {
      {"train loss", "#1f77b4", "", true, [](const EpochRecord& e, double top) { return e.train_loss / top; }},
      {"validation loss", "#ff7f0e", "", has_val_loss,
       [](const EpochRecord& e, double top) { return e.val_loss < 0 ? -1.0 : e.val_loss / top; }},
      {"train accuracy", "#2ca02c", " stroke-dasharray=\"6,3\"", true,
       [](const EpochRecord& e, double) { return e.train_acc; }},
      {"validation accuracy", "#d62728", " stroke-dasharray=\"6,3\"", has_val,
       [](const EpochRecord& e, double) { return e.val_acc; }},
  };
  double legend_x = L;
  for (const auto& sr : series) {
    if (!sr.show) continue;
    std::vector<std::pair<double, double>> xy;
    for (const auto& e : h) {
      const double v = sr.value(e, loss_top);
      if (v >= 0) xy.emplace_back(x_of(e.epoch), y_of(v));
    }
    s << "<polyline fill=\"none\" stroke=\"" << sr.color << "\" stroke-width=\"2\"" << sr.dash << " points=\""
      << thinned_points(xy) << "\"/>\n";
    // Legend row between the title and the plot: never over a line.
    s << "<line x1=\"" << legend_x << "\" y1=\"" << legend_y - 4 << "\" x2=\"" << legend_x + 22 << "\" y2=\""
      << legend_y - 4 << "\" stroke=\"" << sr.color << "\" stroke-width=\"2\"" << sr.dash << "/>\n";
    s << "<text x=\"" << legend_x + 27 << "\" y=\"" << legend_y << "\">" << sr.name << "</text>\n";
    legend_x += 40 + text_px(sr.name, 12);
  }
  s << "</svg>\n";
  return s.str();
}

std::string confusion_path_for(const std::string& model_path) {
  std::string curve = curve_path_for(model_path);
  return curve.substr(0, curve.size() - std::strlen(".curve.svg")) + ".confusion.svg";
}

namespace {

// The compact confusion picture (more than kConfusionGridClasses classes): the kConfusionListed most
// frequent confusions, one bar each (its length the share of the true class), linked as the grid's cells;
// then the kConfusionListed classes of lowest accuracy, one bar each, linked as the grid's diagonal.
std::string confusion_list_svg(const std::vector<std::string>& classes, const std::vector<int>& cm,
                               const std::string& title, const std::function<std::string(size_t, size_t)>& cell_link) {
  const size_t k = classes.size();
  std::vector<int> row(k, 0);
  std::vector<size_t> cells, worst;
  int right = 0, total = 0;
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j) {
      row[i] += cm[i * k + j];
      total += cm[i * k + j];
      if (i == j) right += cm[i * k + j];
      if (i != j && cm[i * k + j] > 0) cells.push_back(i * k + j);
    }
  std::stable_sort(cells.begin(), cells.end(), [&](size_t a, size_t b) { return cm[a] > cm[b]; });
  const size_t confusions = cells.size();
  if (cells.size() > kConfusionListed) cells.resize(kConfusionListed);
  auto accuracy = [&](size_t i) { return row[i] ? (double)cm[i * k + i] / row[i] : 2.0; };
  size_t evaluated = 0;
  for (size_t i = 0; i < k; ++i)
    if (row[i] > 0) worst.push_back(i), ++evaluated;
  std::stable_sort(worst.begin(), worst.end(), [&](size_t a, size_t b) { return accuracy(a) < accuracy(b); });
  if (worst.size() > kConfusionListed) worst.resize(kConfusionListed);
  const int W = 760, line = 22, bar_x = 470, bar_w = 200;
  const FittedText title_fit = fit_title(title, W);
  const int title_bottom = 22 + (int)std::ceil(title_fit.height() - title_fit.font_px);
  std::ostringstream s;
  // A caption, then one bar a row: its label (left), its count (right-aligned before the bar), its share.
  int y = title_bottom + 14;
  auto caption = [&](const std::string& text) {
    const FittedText c = fit_text(text, W - 20, 12, 10, 3);
    s << svg_lines(c, 10, y + c.font_px, "start", " fill=\"#555\"");
    y += 6 + (int)std::ceil(c.height());
  };
  auto bar = [&](const std::string& label, const std::string& count, double share, const char* color,
                 const std::string& link) {
    if (!link.empty()) s << "<a href=\"" << xml_escape(link) << "\">";
    s << "<text x=\"10\" y=\"" << y + 15 << "\">" << label << "</text>";
    s << "<text x=\"" << bar_x - 8 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << count << "</text>";
    s << "<rect x=\"" << bar_x << "\" y=\"" << y + 4 << "\" width=\"" << (int)std::lround(bar_w * share)
      << "\" height=\"14\" fill=\"" << color << "\"/><text x=\"" << bar_x + bar_w + 8 << "\" y=\"" << y + 15 << "\">"
      << fmt("%.1f", 100.0 * share) << " %</text>";
    s << (link.empty() ? "\n" : "</a>\n");
    y += line;
  };
  caption(std::to_string(k) + " classes, " + std::to_string(right) + " of " + std::to_string(total) +
          " images right; the " + std::to_string(cells.size()) + " most frequent confusions of " +
          std::to_string(confusions) + " (true -> predicted, images, share of the true class):");
  if (cells.empty()) {
    s << "<text x=\"10\" y=\"" << y + 15 << "\">no image is confused with another class</text>\n";
    y += line;
  }
  for (size_t c : cells) {
    const size_t i = c / k, j = c % k;
    bar(xml_escape(picture_name(classes[i])) + " -&gt; " + xml_escape(picture_name(classes[j])), std::to_string(cm[c]),
        row[i] ? (double)cm[c] / row[i] : 0.0, "rgb(220,90,90)", cell_link ? cell_link(i, j) : std::string());
  }
  y += 10;
  caption("the " + std::to_string(worst.size()) + " of " + std::to_string(evaluated) +
          " evaluated classes with the lowest accuracy (right / images):");
  for (size_t i : worst)
    bar(xml_escape(picture_name(classes[i])), std::to_string(cm[i * k + i]) + "/" + std::to_string(row[i]), accuracy(i),
        "rgb(90,90,220)", cell_link ? cell_link(i, i) : std::string());
  const int H = y + 16;
  std::ostringstream out;
  svg_open(out, W, H, title_fit);
  out << s.str() << "</svg>\n";
  return out.str();
}

}  // namespace

std::string confusion_svg(const std::vector<std::string>& classes, const std::vector<int>& cm, const std::string& title,
                          const std::function<std::string(size_t, size_t)>& cell_link) {
  const size_t k = classes.size();
  if (k > kConfusionGridClasses) return confusion_list_svg(classes, cm, title, cell_link);
  // Class names clipped to 24 columns; the column heads are turned 40 degrees up to the right.
  std::vector<std::string> names;
  double label_px = text_px("true", 12);
  for (const auto& c : classes) {
    names.push_back(picture_name(c));
    label_px = std::max(label_px, text_px(names.back(), 12));
  }
  const double cos40 = 0.766, sin40 = 0.643;
  const int cell = 48, n = (int)k;
  const int left = 34 + (int)std::ceil(label_px) + 8;
  int right = left + cell * n + 12;  // the last column head reaches furthest right
  for (size_t j = 0; j < k; ++j)
    right = std::max(
        right, (int)std::ceil(left + cell * (double)j + cell / 2.0 + text_px(names[j], 12) * cos40 + 12 * sin40) + 10);
  const int W = std::max(right, 360);
  const FittedText title_fit = fit_title(title, W);
  const FittedText caption =
      fit_text("cells: image counts; shade: share of the true class (blue right, red wrong)", W - 20, 12, 10, 3);
  const int title_bottom = 22 + (int)std::ceil(title_fit.height() - title_fit.font_px);
  const int axis_y = title_bottom + 22;  // "predicted class"
  const int top = axis_y + 14 + (int)std::ceil(label_px * sin40 + 12 * cos40);
  const int grid_bottom = top + cell * n;
  const int H = grid_bottom + 16 + (int)std::ceil(caption.height()) + 6;
  std::ostringstream s;
  svg_open(s, W, H, title_fit);
  s << "<text x=\"" << left + cell * n / 2 << "\" y=\"" << axis_y
    << "\" text-anchor=\"middle\">predicted class</text>\n";
  s << "<text transform=\"translate(18," << top + cell * n / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << "true class</text>\n";
  for (size_t i = 0; i < k; ++i) {
    int row = 0;
    for (size_t j = 0; j < k; ++j) row += cm[i * k + j];
    const std::string name = xml_escape(names[i]);
    s << "<text x=\"" << left - 6 << "\" y=\"" << top + cell * (int)i + cell / 2 + 4 << "\" text-anchor=\"end\">"
      << name << "</text>\n";
    s << "<text transform=\"translate(" << left + cell * (int)i + cell / 2 << "," << top - 6 << ") rotate(-40)\">"
      << name << "</text>\n";
    for (size_t j = 0; j < k; ++j) {
      const int v = cm[i * k + j];
      const double share = row ? (double)v / row : 0.0;
      // White to dark blue (right) or dark red (wrong) by the share of the true class.
      const int shade = (int)std::lround(255 - 200 * share);
      const std::string fill = i == j ? "rgb(" + std::to_string(shade) + "," + std::to_string(shade) + ",255)"
                                      : "rgb(255," + std::to_string(shade) + "," + std::to_string(shade) + ")";
      const int x = left + cell * (int)j, y = top + cell * (int)i;
      // A count as wide as the cell allows: 12 px, smaller for many digits.
      const std::string count = std::to_string(v);
      const double font = std::min(12.0, std::floor((cell - 6) / text_px(count, 1)));
      const std::string link = cell_link && v > 0 ? cell_link(i, j) : std::string();
      if (!link.empty()) s << "<a href=\"" << xml_escape(link) << "\">";
      s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell << "\" height=\"" << cell << "\" fill=\""
        << fill << "\" stroke=\"#999\"/>";
      s << "<text x=\"" << x + cell / 2 << "\" y=\"" << y + cell / 2 + 4 << "\" text-anchor=\"middle\" font-size=\""
        << fmt("%.0f", font) << "\" fill=\"" << (share > 0.6 ? "white" : "black") << "\">" << count << "</text>";
      s << (link.empty() ? "\n" : "</a>\n");
    }
  }
  s << svg_lines(caption, 10, grid_bottom + 16 + caption.font_px, "start", " fill=\"#555\"");
  s << "</svg>\n";
  return s.str();
}

std::vector<ClassMetrics> class_metrics(const std::vector<int>& cm, size_t k) {
  std::vector<ClassMetrics> m(k);
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) {
      m[i].support += cm[i * k + j];
      m[j].predicted += cm[i * k + j];
    }
  }
  for (size_t c = 0; c < k; ++c) {
    const double tp = cm[c * k + c];
    m[c].precision = m[c].predicted ? tp / m[c].predicted : 0.0;
    m[c].recall = m[c].support ? tp / m[c].support : 0.0;
    const double sum = m[c].precision + m[c].recall;
    m[c].f1 = sum > 0 ? 2 * m[c].precision * m[c].recall / sum : 0.0;
  }
  return m;
}

std::string class_metrics_text(const std::vector<std::string>& names, const std::vector<int>& cm) {
  const std::vector<std::string> classes = one_line_names(names);  // a folder name may hold a newline
  const auto m = class_metrics(cm, classes.size());
  size_t w = 6;
  for (const auto& c : classes) w = std::max(w, text_width(c) + 1);
  std::ostringstream o;
  char head[64];
  std::snprintf(head, sizeof head, "%11s%11s%8s%8s\n", "precision", "recall", "F1", "images");
  o << "class" << std::string(w - 5, ' ') << head;
  for (size_t c = 0; c < classes.size(); ++c) {
    auto pct = [](double v, bool defined) { return defined ? fmt("%9.1f %%", 100 * v) : std::string("          -"); };
    o << pad_right(classes[c], w) << pct(m[c].precision, m[c].predicted > 0) << pct(m[c].recall, m[c].support > 0)
      << fmt("%8.3f", m[c].f1) << fmt("%8.0f", (double)m[c].support) << "\n";
  }
  return o.str();
}

std::string misclassified_text(const Dataset& ds, const EvalResult& r, size_t show) {
  std::vector<size_t> wrong;
  for (size_t i = 0; i < r.index.size(); ++i) {
    if (r.predicted[i] != ds.labels[(size_t)r.index[i]]) wrong.push_back(i);
  }
  if (wrong.empty()) return "";
  std::string out = std::to_string(wrong.size()) + " misclassified image(s):";
  for (size_t n = 0; n < wrong.size() && n < show; ++n) {
    const size_t i = wrong[n];
    const size_t d = (size_t)r.index[i];
    out += "\n  " + one_line(ds.paths[d]) + ": " + one_line(ds.classes[(size_t)ds.labels[d]]) + ", predicted " +
           one_line(ds.classes[(size_t)r.predicted[i]]) + " (" + fmt("%.1f", 100.0 * r.confidence[i]) + " %)";
  }
  if (wrong.size() > show) out += "\n  ... and " + std::to_string(wrong.size() - show) + " more (all in --json)";
  return out;
}

Progress::Progress(bool enabled) : tty_(enabled && isatty(2)), start_(now_s()) {}

void Progress::update(int epoch, int epochs, int done, int total) {
  if (!tty_) return;
  double t = now_s();
  if (done < total && t - last_draw_ < 0.05) return;
  last_draw_ = t;
  double frac = ((epoch - 1) + (double)done / std::max(1, total)) / std::max(1, epochs);
  double elapsed = t - start_;
  double eta = frac > 0 ? elapsed * (1 - frac) / frac : 0;
  const int width = 30;
  int fill = (int)std::lround(frac * width);
  std::fprintf(stderr, "\r[%s%s] %3.0f%%  epoch %d/%d  ETA %.1fs ", std::string(fill, '#').c_str(),
               std::string(width - fill, ' ').c_str(), 100 * frac, epoch, epochs, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::update_items(const std::string& what, size_t done, size_t total) {
  if (!tty_) return;
  const double t = now_s();
  if (done < total && t - last_draw_ < 0.1) return;
  last_draw_ = t;
  std::fprintf(stderr, "\r%s %zu/%zu ", what.c_str(), done, total);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!tty_ || !drawn_) return;
  std::fprintf(stderr, "\r%s\r", std::string(78, ' ').c_str());
  drawn_ = false;
}

}  // namespace tvh
