#include "host/report.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "host/text_width.h"

namespace tvh {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
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

std::string confusion_text(const std::vector<std::string>& classes, const std::vector<int>& cm) {
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

std::string curve_svg(const std::vector<EpochRecord>& h, const std::string& title) {
  const int W = 640, H = 360, L = 60, R = 60, T = 40, B = 50;
  const int pw = W - L - R, ph = H - T - B;
  double max_loss = 1e-9;
  for (const auto& e : h) max_loss = std::max(max_loss, e.train_loss);
  max_loss *= 1.05;
  const size_t n = h.size();
  auto x_of = [&](size_t i) { return L + (n <= 1 ? pw / 2.0 : pw * (double)i / (double)(n - 1)); };
  auto poly = [&](auto value, const char* color, const char* dash) {
    std::ostringstream o;
    o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"" << dash << " points=\"";
    for (size_t i = 0; i < n; ++i) {
      double v = value(h[i]);
      if (v < 0) continue;
      o << fmt("%.1f", x_of(i)) << "," << fmt("%.1f", T + ph * (1.0 - v)) << " ";
    }
    o << "\"/>\n";
    return o.str();
  };
  std::string esc;
  for (char c : title) esc += c == '<' ? "&lt;" : c == '&' ? "&amp;" : c == '>' ? "&gt;" : std::string(1, c);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << esc << "</text>\n";
  for (int g = 0; g <= 4; ++g) {
    double y = T + ph * g / 4.0;
    s << "<line x1=\"" << L << "\" y1=\"" << y << "\" x2=\"" << L + pw << "\" y2=\"" << y << "\" stroke=\"#ddd\"/>\n";
    s << "<text x=\"" << L - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\" fill=\"#1f77b4\">"
      << fmt("%.2f", max_loss * (1.0 - g / 4.0)) << "</text>\n";
    s << "<text x=\"" << L + pw + 6 << "\" y=\"" << y + 4 << "\" fill=\"#2ca02c\">" << (100 - 25 * g) << "%</text>\n";
  }
  s << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 10))
    s << "<text x=\"" << fmt("%.1f", x_of(i)) << "\" y=\"" << T + ph + 16 << "\" text-anchor=\"middle\">" << h[i].epoch
      << "</text>\n";
  s << "<text x=\"" << L + pw / 2 << "\" y=\"" << H - 12 << "\" text-anchor=\"middle\">epoch</text>\n";
  s << poly([&](const EpochRecord& e) { return e.train_loss / max_loss; }, "#1f77b4", "");
  s << poly([](const EpochRecord& e) { return e.train_acc; }, "#2ca02c", " stroke-dasharray=\"5,3\"");
  s << poly([](const EpochRecord& e) { return e.val_acc; }, "#d62728", "");
  s << "<text x=\"" << L + 8 << "\" y=\"" << T + 16 << "\" fill=\"#1f77b4\">train loss</text>\n";
  s << "<text x=\"" << L + 90 << "\" y=\"" << T + 16 << "\" fill=\"#2ca02c\">train accuracy</text>\n";
  s << "<text x=\"" << L + 200 << "\" y=\"" << T + 16 << "\" fill=\"#d62728\">validation accuracy</text>\n";
  s << "</svg>\n";
  return s.str();
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
