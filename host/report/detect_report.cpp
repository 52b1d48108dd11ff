#include "host/report/detect_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "host/photos/jpeg.h"
#include "host/photos/thumbnails.h"
#include "host/report/report.h"

namespace tvh {

namespace {

std::string figure(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

// One photo's errors: its false alarms and missed boxes (the worst photos have the most).
struct PhotoErrors {
  size_t at = 0;  // position in `photos`
  long fp = 0, fn = 0;
};

std::vector<PhotoErrors> worst_first(const std::vector<PhotoDetections>& photos) {
  std::vector<PhotoErrors> out;
  for (size_t k = 0; k < photos.size(); ++k) {
    const DetectionMatch m = match_detections(photos[k]);
    PhotoErrors e;
    e.at = k;
    for (int b : m.box_of_prediction) e.fp += b < 0 ? 1 : 0;
    for (bool f : m.box_found) e.fn += f ? 0 : 1;
    out.push_back(e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PhotoErrors& a, const PhotoErrors& b) { return a.fp + a.fn > b.fp + b.fn; });
  return out;
}

std::string class_name(const DetectionDataset& ds, int label) {
  return label >= 0 && (size_t)label < ds.classes.size() ? report_text(ds.classes[(size_t)label], 40) : "?";
}

// The model's input of photo i as a JPEG data URI, or "" past the budget.
std::string input_picture(const DetectionDataset& ds, size_t i, size_t budget, size_t* spent) {
  std::vector<uint8_t> rgb(ds.image(i), ds.image(i) + ds.image_bytes());
  if (ds.channels == 3 && ds.order == tv::ChannelOrder::BGR)
    for (size_t p = 0; p + 2 < rgb.size(); p += 3) std::swap(rgb[p], rgb[p + 2]);
  const std::vector<uint8_t> jpeg = encode_jpeg(rgb.data(), ds.width, ds.height, ds.channels, 85);
  const size_t cost = (jpeg.size() + 2) / 3 * 4 + 32;
  if (*spent + cost > budget) return "";
  *spent += cost;
  return jpeg_data_uri(jpeg);
}

// The photo (200 pixels on its longer side) with its boxes and objects drawn over it.
std::string photo_svg(const DetectionDataset& ds, const PhotoDetections& p, const std::string& picture) {
  const DetectionMatch m = match_detections(p);
  const double W = ds.width, H = ds.height, s = 200.0 / (W > H ? W : H);  // 200 pixels on its longer side
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W * s << "\" height=\"" << H * s << "\" viewBox=\"0 0 "
    << W << " " << H << "\" role=\"img\">";
  if (!picture.empty())
    o << "<image href=\"" << picture << "\" width=\"" << W << "\" height=\"" << H << "\"/>";
  else
    o << "<rect width=\"" << W << "\" height=\"" << H << "\" fill=\"#ddd\"/>";
  for (size_t b = 0; b < p.truth.size(); ++b) {
    const tv::DetectBox& box = p.truth[b];
    const double x = (box.cx - box.w / 2) * W, y = (box.cy - box.h / 2) * H, w = box.w * W, h = box.h * H;
    const bool found = m.box_found[b];
    o << "<g class=\"" << (found ? "found" : "missed") << "\"><title>" << class_name(ds, box.label)
      << (found ? ": found" : ": missed") << "</title><rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w
      << "\" height=\"" << h << "\" fill=\"none\" stroke=\"" << (found ? "#0a0" : "#d00") << "\" stroke-width=\"1\""
      << (found ? "" : " stroke-dasharray=\"3 2\"") << "/>";
    if (!found) {  // a cross in its middle
      const double cx = box.cx * W, cy = box.cy * H;
      o << "<path d=\"M" << cx - 3 << " " << cy - 3 << "l6 6m0 -6l-6 6\" stroke=\"#d00\" stroke-width=\"1.2\"/>";
    }
    o << "</g>";
  }
  for (size_t k = 0; k < p.predicted.size(); ++k) {
    const DetectedObject& d = p.predicted[k];
    const double x = d.fx * W, y = d.fy * H;
    const bool right = m.box_of_prediction[k] >= 0;
    o << "<g class=\"" << (right ? "right" : "false-alarm") << "\"><title>" << class_name(ds, d.label) << " "
      << figure("%.2f", d.prob) << (right ? ": right" : ": false alarm") << "</title>";
    if (right)
      o << "<circle cx=\"" << x << "\" cy=\"" << y
        << "\" r=\"2.5\" fill=\"#0a0\" stroke=\"#fff\" stroke-width=\"0.6\"/>";
    else
      o << "<path d=\"M" << x << " " << y - 3.5 << "l3.5 3.5l-3.5 3.5l-3.5 -3.5z\" fill=\"none\" stroke=\"#f80\" "
        << "stroke-width=\"1.2\"/>";
    o << "</g>";
  }
  o << "</svg>";
  return o.str();
}

std::string counts_words(long tp, long fp, long fn) {
  return std::to_string(tp) + " right, " + std::to_string(fp) + " false alarm" + (fp == 1 ? "" : "s") + ", " +
         std::to_string(fn) + " missed";
}

void section_figures(std::ostringstream& s, const DetectReportInput& in) {
  const DetectionMetrics& m = *in.metrics;
  const DetectionDataset& ds = *in.ds;
  s << "<h2 id=\"figures\">How well it finds the objects</h2>\n<p>On " << m.photos << " "
    << report_text(in.evaluated, 80) << (in.int8 ? " (int8)" : "") << ": F1 <b>" << figure("%.3f", m.micro.f1())
    << "</b> (95 % interval " << figure("%.3f", m.f1_ci.first) << "-" << figure("%.3f", m.f1_ci.second)
    << "), precision " << figure("%.3f", m.micro.precision()) << " (" << figure("%.3f", m.precision_ci.first) << "-"
    << figure("%.3f", m.precision_ci.second) << "), recall " << figure("%.3f", m.micro.recall()) << " ("
    << figure("%.3f", m.recall_ci.first) << "-" << figure("%.3f", m.recall_ci.second)
    << "): " << counts_words(m.micro.tp, m.micro.fp, m.micro.fn) << "; the count is off by "
    << figure("%.2f", m.count_mae) << " objects per photo (" << figure("%.2f", m.count_mae_ci.first) << "-"
    << figure("%.2f", m.count_mae_ci.second)
    << ").</p>\n<p class=\"note\">An object is right when its centre falls inside a labelled box of its class; "
       "each box counts once.</p>\n";
  s << "<table><tr><th>class</th><th>F1</th><th>precision</th><th>recall</th><th>right</th><th>false "
       "alarms</th><th>missed</th></tr>\n";
  const size_t shown = std::min(ds.classes.size(), kReportListedClasses);
  for (size_t k = 0; k < shown && k < m.per_class.size(); ++k) {
    const DetectionCounts& c = m.per_class[k];
    s << "<tr><td>" << class_name(ds, (int)k) << "</td><td>" << figure("%.3f", c.f1()) << "</td><td>"
      << figure("%.3f", c.precision()) << "</td><td>" << figure("%.3f", c.recall()) << "</td><td>" << c.tp
      << "</td><td>" << c.fp << "</td><td>" << c.fn << "</td></tr>\n";
  }
  s << "</table>\n";
  if (ds.classes.size() > shown)
    s << "<p class=\"note\">" << ds.classes.size() - shown << " more classes: --json lists them all.</p>\n";
}

size_t section_photos(std::ostringstream& s, const DetectReportInput& in, size_t budget) {
  const DetectionDataset& ds = *in.ds;
  const std::vector<PhotoDetections>& photos = *in.photos;
  s << "<h2 id=\"photos\">The photos, worst first</h2>\n<p>Drawn over the model's input: <b>&#9679;</b> a right "
       "object (green disc), <b>&#9671;</b> a false alarm (orange hollow diamond), a solid frame a labelled box "
       "that was found, a dashed frame with <b>&#215;</b> in its middle one that was missed (red). Hover for the "
       "class and probability.</p>\n<div class=\"cards\">\n";
  size_t spent = 0, left_out = 0;
  const std::vector<PhotoErrors> order = worst_first(photos);
  const size_t shown = std::min(order.size(), kReportMaxPhotos);
  for (size_t r = 0; r < shown; ++r) {
    const PhotoErrors& e = order[r];
    const size_t i = (size_t)in.idx[e.at];
    const std::string picture = input_picture(ds, i, budget, &spent);
    if (picture.empty()) ++left_out;
    const long tp = (long)photos[e.at].predicted.size() - e.fp;
    s << "<figure class=\"card\">" << photo_svg(ds, photos[e.at], picture) << "<figcaption>"
      << report_text(ds.paths[i], 80) << "<br>" << counts_words(tp, e.fp, e.fn)
      << (picture.empty() ? " (picture left out: the report's size budget)" : "") << "</figcaption></figure>\n";
  }
  s << "</div>\n";
  if (order.size() > shown)
    s << "<p class=\"note\">" << order.size() - shown << " more photos are not shown (the " << shown
      << " with the most errors are).</p>\n";
  return left_out;
}

std::string detect_page(const DetectReportInput& in, size_t budget) {
  std::ostringstream s;
  s << report_page_open(in.title);
  s << "<nav><a href=\"#run\">run</a><a href=\"#figures\">figures</a><a href=\"#photos\">photos</a><a "
       "href=\"#next\">next</a></nav>\n";
  const DetectionDataset& ds = *in.ds;
  s << "<h2 id=\"run\">Run</h2>\n<p>" << report_text(in.command, 400) << "</p>\n<p>A detector ("
    << (in.plan ? std::to_string(in.plan->param_count) : std::string("?")) << " parameters, input " << ds.width << "x"
    << ds.height << "x" << ds.channels;
  if (in.plan) {
    const tv::Shape& g = in.plan->layers[in.plan->num_layers - 1].out;
    s << ", a grid of " << g.w << "x" << g.h << " cells, threshold " << figure("%.2f", in.plan->desc.detect_threshold);
  }
  s << ") on " << report_text(ds.source, 200) << " (" << report_text(ds.format, 10) << "): " << ds.size() << " photos, "
    << ds.classes.size() << " classes, " << ds.object_count() << " objects, " << ds.skipped.size()
    << " file(s) left out.</p>\n";
  section_figures(s, in);
  const size_t left_out = section_photos(s, in, budget);
  s << "<h2 id=\"next\">Next</h2>\n<pre>";
  for (const auto& c : in.next_commands) s << report_text(c, 400) << "\n";
  s << "</pre>\n";
  s << report_left_out_note(left_out, budget, in.max_bytes);
  s << report_page_close();
  return s.str();
}

}  // namespace

std::string detect_html_report(const DetectReportInput& in) {
  return report_within_cap(in.image_budget, in.max_bytes, [&](size_t budget) { return detect_page(in, budget); });
}

}  // namespace tvh
