#include "host/report/quant_report.h"

#include <sstream>

#include "host/base/text.h"
#include "host/photos/thumbnails.h"
#include "host/report/html_report.h"
#include "host/report/report.h"
#include "host/report/svg_text.h"
#include "tv/int8/q8_model.h"

namespace tvh {

namespace {

std::string pct1(int part, int whole) {
  return whole ? fmt("%.1f", 100.0 * part / whole) + " %" : std::string("-");
}

// Strings from the command line shown to this many bytes (the command, the calibration in words).
constexpr size_t kQuantShownBytes = 2000;

// The per-class table and the photos on which float and int8 differ (their pictures within
// image_budget); the number of pictures left out for the budget in *left_out.
void section_agreement(std::ostringstream& s, const QuantReportInput& in, size_t image_budget, size_t* left_out) {
  const Dataset& ds = *in.ds;
  const size_t k = ds.classes.size();
  std::vector<int> n(k, 0), fr(k, 0), qr(k, 0), same(k, 0);
  int agree = 0;
  for (size_t m = 0; m < in.idx.size(); ++m) {
    const size_t c = (size_t)ds.labels[(size_t)in.idx[m]];
    ++n[c];
    fr[c] += in.float_pred[m] == (int)c;
    qr[c] += in.int8_pred[m] == (int)c;
    same[c] += in.float_pred[m] == in.int8_pred[m];
    agree += in.float_pred[m] == in.int8_pred[m];
  }
  s << "<h2 id=\"agreement\">Float and int8, per class</h2>\n<p>On " << report_text(in.compared_on, kQuantShownBytes)
    << ": " << in.idx.size() << " images, the same class on " << agree << " (" << pct1(agree, (int)in.idx.size())
    << ").</p>\n<table><tr><th>class</th><th class=\"n\">images</th><th class=\"n\">float right</th><th "
       "class=\"n\">int8 right</th><th class=\"n\">same class</th></tr>\n";
  for (size_t c = 0; c < k && c < kReportListedClasses; ++c)
    s << "<tr><td>" << report_class_name(ds, c) << "</td><td class=\"n\">" << n[c] << "</td><td class=\"n\">"
      << pct1(fr[c], n[c]) << "</td><td class=\"n\">" << pct1(qr[c], n[c]) << "</td><td class=\"n\">"
      << pct1(same[c], n[c]) << "</td></tr>\n";
  s << "</table>\n";
  if (k > kReportListedClasses)
    s << "<p class=\"note\">The first " << kReportListedClasses << " of " << k << " classes are listed.</p>\n";
  ThumbnailMaker thumbs(ds, image_budget);
  std::ostringstream cards;
  size_t shown = 0, differ = 0;
  for (size_t m = 0; m < in.idx.size(); ++m) {
    if (in.float_pred[m] == in.int8_pred[m]) continue;
    ++differ;
    if (shown >= kReportMaxPhotos) continue;
    const size_t d = (size_t)in.idx[m];
    const std::string cap = "true <b>" + report_class_name(ds, (size_t)ds.labels[d]) + "</b>, float <b>" +
                            report_class_name(ds, (size_t)in.float_pred[m]) + "</b>, int8 <b>" +
                            report_class_name(ds, (size_t)in.int8_pred[m]) + "</b>";
    cards << report_photo_card(thumbs, ds, d, "d-" + std::to_string(shown++), cap, "");
  }
  s << "<h3 id=\"disagree\">Photos on which float and int8 differ: " << differ << "</h3>\n";
  if (differ) s << "<div class=\"cards\">\n" << cards.str() << "</div>\n";
  if (differ > shown) s << "<p class=\"note\">The first " << shown << " are shown.</p>\n";
  *left_out = thumbs.left_out();
}

void section_layers(std::ostringstream& s, const QuantReportInput& in) {
  const QuantResult& q = *in.quant;
  s << "<h2 id=\"layers\">Exponents and accumulator headroom</h2>\n<p class=\"note\">Values are int8 times "
       "2<sup>e</sup> (e in: the layer's input, e weights, e out: its output). The ESP32-S3 sums in 20-bit lanes "
       "(|sum| &le; 524,287): headroom = free bits "
       "above the largest sum any input can produce (the guarantee; negative does not fit) and above the "
       "largest seen on the calibration images. Calibration: "
    << report_text(in.calibration, kQuantShownBytes) << "; input exponent "
    << (q.act_exps.empty() ? 0 : (int)q.act_exps[0])
    << ".</p>\n<table><tr><th class=\"n\">#</th><th>layer</th><th class=\"n\">e in</th><th class=\"n\">e "
       "weights</th><th class=\"n\">e out</th><th class=\"n\">shift</th><th class=\"n\">largest sum</th><th "
       "class=\"n\">headroom bits</th><th class=\"n\">seen sum</th><th class=\"n\">seen headroom</th></tr>\n";
  for (const auto& l : q.layers) {
    s << "<tr><td class=\"n\">" << l.index << "</td><td class=\"nw\">" << xml_escape(l.name) << "</td><td class=\"n\">"
      << l.e_in << "</td>";
    if (l.has_params) {
      s << "<td class=\"n\">" << l.e_w << "</td><td class=\"n\">" << l.e_out << "</td><td class=\"n\">" << l.shift_min
        << (l.shift_max != l.shift_min ? ".." + std::to_string(l.shift_max) : std::string()) << "</td><td class=\"n\">"
        << grouped(l.acc_bound) << "</td><td class=\"n\"" << (l.bound_headroom_bits < 0 ? " style=\"color:#b00\"" : "")
        << ">" << l.bound_headroom_bits << "</td><td class=\"n\">" << grouped(l.observed_acc) << "</td><td class=\"n\">"
        << l.observed_headroom_bits << "</td>";
    } else {
      s << "<td></td><td class=\"n\">" << l.e_out << "</td><td></td><td></td><td></td><td></td><td></td>";
    }
    s << "</tr>\n";
  }
  s << "</table>\n";
  if (q.adjustments.empty()) s << "<p>No layer needed an exponent adjustment.</p>\n";
  for (const auto& a : q.adjustments) s << "<p>adjusted: " << xml_escape(a) << "</p>\n";
  const tv::Q8Memory qm = tv::q8_memory(*in.plan);
  const tv::InferenceMemory fm = tv::inference_memory(*in.plan);
  s << "<h2 id=\"memory\">Memory on the board</h2>\n<table><tr><th>inference (bytes)</th><th "
       "class=\"n\">weights</th><th class=\"n\">work</th><th class=\"n\">total</th></tr>\n<tr><td>float</td><td "
       "class=\"n\">"
    << grouped((int64_t)fm.params_bytes) << "</td><td class=\"n\">" << grouped((int64_t)fm.work_bytes)
    << "</td><td class=\"n\">" << grouped((int64_t)fm.total_bytes) << "</td></tr>\n<tr><td>int8</td><td class=\"n\">"
    << grouped((int64_t)qm.weight_bytes) << "</td><td class=\"n\">" << grouped((int64_t)qm.work_bytes)
    << "</td><td class=\"n\">" << grouped((int64_t)qm.total_bytes) << "</td></tr></table>\n";
}

}  // namespace

std::string quant_html_report(const QuantReportInput& in) {
  // The text is capped (classes, photos, every user string shortened), so it fits; the pictures take
  // what is left of their budget.
  return report_within_cap(kReportImageBudget, kReportMaxBytes, [&](size_t budget) {
    std::ostringstream s;
    s << report_page_open(in.title);
    s << "<nav><a href=\"#agreement\">float and int8</a><a href=\"#disagree\">photos that differ</a><a "
         "href=\"#layers\">exponents</a><a href=\"#memory\">memory</a><a href=\"#next\">next</a></nav>\n";
    s << "<p><code>" << report_text(in.command, kQuantShownBytes) << "</code></p>\n";
    size_t left_out = 0;
    section_agreement(s, in, budget, &left_out);
    if (in.plan && in.quant) section_layers(s, in);
    s << "<h2 id=\"next\">Next</h2>\n<pre>";
    for (const auto& c : in.next_commands) s << xml_escape(c) << "\n";
    s << "</pre>\n" << report_left_out_note(left_out, budget, kReportMaxBytes) << report_page_close();
    return s.str();
  });
}

}  // namespace tvh
