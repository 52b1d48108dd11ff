#include "host/report/html_report.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "host/base/interval.h"
#include "host/base/text.h"
#include "host/export/export.h"
#include "host/model/model_io.h"
#include "host/photos/thumbnails.h"
#include "host/report/report.h"
#include "host/report/svg_text.h"
#include "tv/int8/q8_model.h"

namespace tvh {

namespace {

// The photos named under each cell of the confusion matrix, and under all cells together.
constexpr size_t kNamesPerCell = 30, kNamesInCells = 1500;
// Paths longer than this many bytes are shown with their middle left out (every path is in --json).
constexpr size_t kShownPathBytes = 240;
// What keeps the text of the page under kReportPageBytes for any dataset (1,000 classes of 255-byte names,
// thousands of warnings): every user string shortened (class names to 60 bytes, lines to 400, titles to
// 300, the command to 2,000) and bounded once escaped, every list capped with the count of the rest
// (every figure is in --json).
constexpr size_t kShownNameBytes = 60, kShownLineBytes = 400, kShownTitleBytes = 300, kShownCommandBytes = 2000;
constexpr size_t kListedCells = 100;  // cells listed with their photos past the grid (kConfusionGridClasses)

// How much of each list the page shows. The page is built at level 0; when its text alone (no picture)
// is over the page's cap, at the first level whose text fits (at kReportMaxBytes the last always does:
// tests/host/report/report_size_test.cpp builds the heaviest text the caps allow).
struct ReportCaps {
  size_t classes;            // in the run's list, the per-class table, the filter and the samples
  size_t warnings, skipped;  // lines listed
  size_t cells;              // confusion cells listed with their photos (0: every one of the grid, the
                             // fullest kListedCells past it)
  size_t names_per_cell, names_in_cells;
  size_t photos;             // cards of the suspects, and of the misclassified photos
  size_t samples_per_class;  // at most
};
constexpr ReportCaps kReportCaps[] = {
    {kReportListedClasses, 40, 20, 0, kNamesPerCell, kNamesInCells, kReportMaxPhotos, 4},
    {50, 20, 10, 50, 10, 300, 100, 2},
    {20, 10, 5, 20, 3, 60, 30, 1},
};
constexpr size_t kReportLevels = sizeof kReportCaps / sizeof kReportCaps[0];

const char* const kStyle = R"(
body{font-family:sans-serif;margin:0 auto;max-width:1100px;padding:0 16px 40px;color:#222;line-height:1.4}
h1{font-size:22px;overflow-wrap:anywhere}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:32px}
h3{font-size:15px;overflow-wrap:anywhere}
nav a{margin-right:12px;display:inline-block}
table{border-collapse:collapse;margin:8px 0;max-width:100%}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
td.n,th.n{text-align:right;white-space:nowrap}
.wrap{overflow-wrap:anywhere;word-break:break-word}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #ccc;border-radius:4px;padding:6px;margin:0;width:220px;box-sizing:border-box}
.card figcaption{font-size:12px;overflow-wrap:anywhere;word-break:break-word}
.pics{display:flex;gap:6px;align-items:flex-end;min-height:20px;flex-wrap:wrap}
.pics img{display:block;max-width:100%}
img.input{image-rendering:pixelated;border:1px solid #999}
.gone{font-size:11px;color:#777}
.svg{overflow-x:auto;max-width:100%}
.note{color:#555;font-size:13px}
code,pre{background:#f4f4f4;padding:1px 4px;overflow-wrap:anywhere;white-space:pre-wrap}
.hidden{display:none}
.nw{white-space:nowrap}
)";

std::string esc(const std::string& s) {
  return xml_escape(s);
}

// A user string as shown: escaped, whole or its start and end around "..." (escape_shortened).
std::string shown(const std::string& text, size_t limit = kShownPathBytes) {
  return escape_shortened(text, limit);
}

// Photo i's path as shown (escaped): from inside the dataset's folder (class folder and file name),
// shortened.
std::string shown_name(const Dataset& ds, size_t i) {
  const std::string& path = ds.paths[i];
  const bool inside = path.size() > ds.source.size() + 1 && path.compare(0, ds.source.size(), ds.source) == 0 &&
                      path[ds.source.size()] == '/';
  return shown(inside ? path.substr(ds.source.size() + 1) : path);
}

std::string cname(const Dataset& ds, size_t c) {
  return report_class_name(ds, c);
}

// "<li>... and N more (--json)</li>" when `total` exceeds `shown`.
std::string more_items(size_t total, size_t shown, const char* what = "") {
  return total > shown ? "<li>... and " + std::to_string(total - shown) + " more" + what + " (--json)</li>" : "";
}

std::string pct1(double v) {
  return fmt("%.1f", 100.0 * v) + " %";
}

std::string cell_anchor(size_t i, size_t j) {
  return i == j ? "class-" + std::to_string(i) : "cell-" + std::to_string(i) + "-" + std::to_string(j);
}

// A picture or, when it was left out, why.
std::string img_or_note(const std::string& uri, const std::string& alt, const std::string& extra,
                        const std::string& why) {
  if (uri.empty()) return "<span class=\"gone\">" + esc(why) + "</span>";
  return "<img src=\"" + uri + "\" alt=\"" + esc(alt) + "\"" + extra + ">";
}

}  // namespace

// One photo: the original (upright, small) and the model's input at its real size, with a caption.
std::string report_photo_card(ThumbnailMaker& thumbs, const Dataset& ds, size_t i, const std::string& id,
                              const std::string& caption_html, const std::string& data_attrs) {
  std::ostringstream s;
  s << "<figure class=\"card\"" << (id.empty() ? "" : " id=\"" + id + "\"") << data_attrs << "><div class=\"pics\">";
  std::string uri = thumbs.original(i);
  s << img_or_note(uri, "photo", "", thumbs.why());
  uri = thumbs.model_input(i);
  s << img_or_note(uri, "model input",
                   " class=\"input\" width=\"" + std::to_string(ds.width) + "\" height=\"" + std::to_string(ds.height) +
                       "\" title=\"the model's input, " + std::to_string(ds.width) + "x" + std::to_string(ds.height) +
                       "\"",
                   thumbs.why());
  s << "</div><figcaption><span class=\"wrap\">" << shown_name(ds, i) << "</span><br>" << caption_html
    << "</figcaption></figure>\n";
  return s.str();
}

namespace {

// What one build of the page shows: its caps, and the confusion cells listed with their photos (the
// confusion picture links only to those, and to the classes whose samples are shown).
struct PagePlan {
  ReportCaps caps;
  std::vector<size_t> cells;  // cell t * k + p, in the order listed
  size_t confused_cells = 0;  // non-empty cells off the diagonal
  std::set<size_t> listed;    // the cells' indices
};

PagePlan plan_page(const ReportInput& in, const ReportCaps& caps) {
  PagePlan p;
  p.caps = caps;
  if (!in.eval || in.eval->total == 0) return p;
  const size_t k = in.ds->classes.size();
  const std::vector<int>& cm = in.eval->confusion;
  for (size_t c = 0; c < k * k && c < cm.size(); ++c)
    if (c / k != c % k && cm[c] > 0) p.cells.push_back(c);
  p.confused_cells = p.cells.size();
  // the grid links every non-empty cell; past it (or when shortened) the fullest are listed
  if (k > kConfusionGridClasses || caps.cells) {
    std::stable_sort(p.cells.begin(), p.cells.end(), [&](size_t a, size_t b) { return cm[a] > cm[b]; });
    const size_t cap = caps.cells ? caps.cells : kListedCells;
    if (p.cells.size() > cap) p.cells.resize(cap);
  }
  p.listed.insert(p.cells.begin(), p.cells.end());
  return p;
}

void section_run(std::ostringstream& s, const ReportInput& in, const PagePlan& plan) {
  const Dataset& ds = *in.ds;
  const ReportCaps& caps = plan.caps;
  s << "<h2 id=\"run\">The run</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v_html) {
    s << "<tr><th>" << k << "</th><td>" << v_html << "</td></tr>\n";
  };
  row("command", "<code>" + shown(in.command, kShownCommandBytes) + "</code>");
  row("dataset", shown(ds.source) + " &mdash; " + std::to_string(ds.size()) + " images, " +
                     std::to_string(ds.classes.size()) + " classes, " + std::to_string(ds.width) + "x" +
                     std::to_string(ds.height) + "x" + std::to_string(ds.channels) + " model input");
  std::string classes;
  const std::vector<size_t> counts = ds.class_counts();
  for (size_t c = 0; c < ds.classes.size() && c < caps.classes; ++c)
    classes += std::string(c ? ", " : "") + "<a href=\"#class-" + std::to_string(c) + "\">" + cname(ds, c) + "</a> " +
               std::to_string(counts[c]);
  if (ds.classes.size() > caps.classes)
    classes += " and " + std::to_string(ds.classes.size() - caps.classes) + " more classes (--json)";
  row("classes (images)", classes);
  std::map<std::string, size_t> by_reason;
  for (const auto& f : ds.skipped) ++by_reason[f.reason];
  std::string skipped = ds.skipped.empty() ? "none" : std::to_string(ds.skipped.size()) + ":";
  size_t reasons = 0;
  for (const auto& [reason, n] : by_reason) {
    if (++reasons > caps.skipped) {
      skipped += ", " + std::to_string(by_reason.size() - caps.skipped) + " more reasons";
      break;
    }
    std::string words = reason;
    std::replace(words.begin(), words.end(), '_', ' ');
    skipped += (skipped.back() == ':' ? " " : ", ") + std::to_string(n) + " " + shown(words, kShownNameBytes);
  }
  if (!ds.skipped.empty()) {
    skipped += "<ul>";
    for (size_t n = 0; n < ds.skipped.size() && n < caps.skipped; ++n)
      skipped += "<li>" + shown(ds.skipped[n].message, kShownLineBytes) + "</li>";
    skipped += more_items(ds.skipped.size(), caps.skipped) + "</ul>";
  }
  row("files not used", skipped);
  std::vector<std::string> warnings = ds.warnings;
  warnings.insert(warnings.end(), in.warnings.begin(), in.warnings.end());
  std::string w = warnings.empty() ? "none" : "<ul>";
  for (size_t n = 0; n < warnings.size() && n < caps.warnings; ++n)
    w += "<li>" + shown(warnings[n], kShownLineBytes) + "</li>";
  if (!warnings.empty()) w += more_items(warnings.size(), caps.warnings) + "</ul>";
  row("warnings", w);
  row("preset and recipe",
      shown(in.preset, kShownLineBytes) + (in.recipe.empty() ? "" : ": " + shown(in.recipe, kShownLineBytes)));
  row("seed", std::to_string(in.seed));
  row("started", shown(in.started, kShownNameBytes) + ", took " + fmt("%.1f", in.seconds) + " s");
  if (in.eval && in.eval->total) {
    const std::pair<double, double> ci = wilson_interval(in.eval->correct, in.eval->total);
    row("accuracy", pct1(in.eval->accuracy()) + " (" + std::to_string(in.eval->correct) + "/" +
                        std::to_string(in.eval->total) + " " + shown(in.evaluated, kShownLineBytes) +
                        "), 95 % interval " + pct1(ci.first) + " &ndash; " + pct1(ci.second));
  }
  s << "</table>\n";
}

void section_results(std::ostringstream& s, const ReportInput& in, const PagePlan& plan) {
  const Dataset& ds = *in.ds;
  const ReportCaps& caps = plan.caps;
  s << "<h2 id=\"results\">Curve and confusion matrix</h2>\n";
  if (in.history && !in.history->empty())
    s << "<div class=\"svg\">" << curve_svg(*in.history, in.title, in.kept_epoch) << "</div>\n";
  if (!in.eval || in.eval->total == 0) {
    s << "<p class=\"note\">No image was evaluated (no validation split): use --kfold to measure on every image.</p>\n";
    return;
  }
  const size_t k = ds.classes.size();
  const std::string evaluated = shown(in.evaluated, kShownLineBytes);
  s << "<p class=\"note\">Rows: true class; columns: predicted, on the " << evaluated << ". ";
  if (k > kConfusionGridClasses)
    s << "Past " << kConfusionGridClasses << " classes the picture lists the most frequent confusions and the "
      << "classes of lowest accuracy instead of the " << k << " x " << k << " grid. ";
  s << "Click a " << (k > kConfusionGridClasses ? "row" : "cell") << " to see its photos.</p>\n";
  // Links only to what this page lists: the cells below, the classes whose samples are shown.
  auto link = [&](size_t i, size_t j) {
    const bool listed = i == j ? i < caps.classes : plan.listed.count(i * k + j) > 0;
    return listed ? "#" + cell_anchor(i, j) : std::string();
  };
  s << "<div class=\"svg\">" << confusion_svg(ds.classes, in.eval->confusion, "confusion on the " + in.evaluated, link)
    << "</div>\n";
  const auto m = class_metrics(in.eval->confusion, k);
  s << "<table><tr><th>class</th><th class=\"n\">precision</th><th class=\"n\">95 % interval</th><th "
       "class=\"n\">recall</th><th class=\"n\">95 % interval</th><th class=\"n\">F1</th><th "
       "class=\"n\">images</th></tr>\n";
  for (size_t c = 0; c < k && c < caps.classes; ++c) {
    const int tp = in.eval->confusion[c * k + c];
    const std::pair<double, double> p = wilson_interval(tp, m[c].predicted), r = wilson_interval(tp, m[c].support);
    auto cells = [&](double v, const std::pair<double, double>& ci, int n) {
      return n ? "<td class=\"n\">" + pct1(v) + "</td><td class=\"n\">" + pct1(ci.first) + " &ndash; " +
                     pct1(ci.second) + "</td>"
               : std::string("<td class=\"n\">-</td><td class=\"n\">-</td>");
    };
    s << "<tr><td>" << cname(ds, c) << "</td>" << cells(m[c].precision, p, m[c].predicted)
      << cells(m[c].recall, r, m[c].support) << "<td class=\"n\">" << fmt("%.3f", m[c].f1) << "</td><td class=\"n\">"
      << m[c].support << "</td></tr>\n";
  }
  s << "</table>\n";
  if (k > caps.classes)
    s << "<p class=\"note\">The first " << caps.classes << " of " << k << " classes are listed (--json has all).</p>\n";
  s << "<p class=\"note\">Intervals: Wilson 95 %; wide intervals mean few images: add photos or "
       "measure with --kfold.</p>\n";
}

void section_suspects(std::ostringstream& s, const ReportInput& in, ThumbnailMaker& thumbs, const PagePlan& plan) {
  if (!in.kfold) return;
  const Dataset& ds = *in.ds;
  const size_t photos = plan.caps.photos;
  s << "<h2 id=\"suspects\">Likely label mistakes</h2>\n";
  if (in.suspects.empty()) {
    s << "<p>None found: no photo's out-of-fold prediction confidently names another class.</p>\n";
    return;
  }
  s << "<p>" << in.suspects.size()
    << " photo(s) whose folder's class has a low out-of-fold probability while another class is likelier "
       "(docs/suspect-labels.md). Check them first: move a photo to its right folder, or delete it.";
  if (in.suspects.size() > photos) s << " The " << photos << " most likely are shown.";
  s << "</p>\n<div class=\"cards\">\n";
  for (size_t n = 0; n < in.suspects.size() && n < photos; ++n) {
    const SuspectLabel& x = in.suspects[n];
    const std::string cap = "in <b>" + cname(ds, (size_t)x.given) + "</b> (" + pct1(x.p_given) + "), looks like <b>" +
                            cname(ds, (size_t)x.suggested) + "</b> (" + pct1(x.p_suggested) + ")";
    s << report_photo_card(thumbs, ds, (size_t)x.index, "s-" + std::to_string(n), cap, "");
  }
  s << "</div>\n";
}

// The misclassified photos of the evaluation, worst (lowest probability of the true class) first.
std::vector<size_t> wrong_worst_first(const EvalResult& r, const Dataset& ds) {
  const size_t k = ds.classes.size();
  std::vector<size_t> wrong;
  for (size_t n = 0; n < r.index.size(); ++n) {
    if (r.predicted[n] != ds.labels[(size_t)r.index[n]]) wrong.push_back(n);
  }
  auto p_true = [&](size_t n) {
    const size_t truth = (size_t)ds.labels[(size_t)r.index[n]];
    return r.probs.size() == r.index.size() * k ? r.probs[n * k + truth] : 1.f - r.confidence[n];
  };
  std::stable_sort(wrong.begin(), wrong.end(), [&](size_t a, size_t b) { return p_true(a) < p_true(b); });
  return wrong;
}

void section_misclassified(std::ostringstream& s, const ReportInput& in, ThumbnailMaker& thumbs, const PagePlan& plan) {
  if (!in.eval || in.eval->total == 0) return;
  const Dataset& ds = *in.ds;
  const EvalResult& r = *in.eval;
  const ReportCaps& caps = plan.caps;
  const size_t k = ds.classes.size();
  const std::vector<size_t> wrong = wrong_worst_first(r, ds);
  const std::string evaluated = shown(in.evaluated, kShownLineBytes);
  s << "<h2 id=\"wrong\">Misclassified photos</h2>\n";
  if (wrong.empty()) {
    s << "<p>None: every one of the " << r.total << " " << evaluated << " is classified right.</p>\n";
    return;
  }
  s << "<p>" << wrong.size() << " of " << r.total << " " << evaluated
    << ", worst first (lowest probability of the true class)";
  if (wrong.size() > caps.photos) s << "; the " << caps.photos << " worst are shown";
  s << ". Each shows the photo and the model's input at its real size.</p>\n";
  if (k <= caps.classes) {
    s << "<p><label>Show class: <select id=\"wrong-filter\"><option value=\"\">all</option>";
    for (size_t c = 0; c < k; ++c) s << "<option value=\"" << c << "\">" << cname(ds, c) << "</option>";
    s << "</select></label></p>\n";
  }
  s << "<div class=\"cards\" id=\"wrong-cards\">\n";
  // the photos named under each listed cell
  std::map<size_t, std::vector<std::string>> by_cell;
  std::map<size_t, size_t> cell_total;
  size_t named = 0;
  for (size_t n = 0; n < wrong.size(); ++n) {
    const size_t e = wrong[n], d = (size_t)r.index[e];
    const size_t t = (size_t)ds.labels[d], p = (size_t)r.predicted[e];
    const std::string id = "m-" + std::to_string(n);
    if (plan.listed.count(t * k + p) && ++cell_total[t * k + p] <= caps.names_per_cell && named < caps.names_in_cells) {
      ++named;
      const std::string name = shown_name(ds, d);
      by_cell[t * k + p].push_back(n < caps.photos ? "<a href=\"#" + id + "\">" + name + "</a>" : name);
    }
    if (n >= caps.photos) continue;
    const float pt = r.probs.size() == r.index.size() * k ? r.probs[e * k + t] : 0.f;
    const std::string cap = "true <b>" + cname(ds, t) + "</b> (" + pct1(pt) + "), predicted <b>" + cname(ds, p) +
                            "</b> (" + pct1(r.confidence[e]) + ")";
    s << report_photo_card(thumbs, ds, d, id, cap,
                           " data-true=\"" + std::to_string(t) + "\" data-pred=\"" + std::to_string(p) + "\"");
  }
  s << "</div>\n<h3>By cell of the confusion matrix</h3>\n";
  for (const size_t c : plan.cells) {
    const size_t t = c / k, p = c % k;
    const std::vector<std::string>& names = by_cell[c];
    s << "<h3 id=\"" << cell_anchor(t, p) << "\">true " << cname(ds, t) << ", predicted " << cname(ds, p) << ": "
      << cell_total[c] << "</h3>\n<ul>";
    for (const auto& item : names) s << "<li class=\"wrap\">" << item << "</li>";
    s << more_items(cell_total[c], names.size()) << "</ul>\n";
  }
  if (plan.confused_cells > plan.cells.size())
    s << "<p class=\"note\">The " << plan.cells.size() << " fullest of " << plan.confused_cells
      << " cells are listed (--json has every prediction).</p>\n";
}

// A few photos of every class, spread over the class (always shown, so a run without mistakes still
// shows its data). The diagonal cells of the confusion matrix link here.
void section_samples(std::ostringstream& s, const ReportInput& in, ThumbnailMaker& thumbs, const PagePlan& plan) {
  const Dataset& ds = *in.ds;
  const ReportCaps& caps = plan.caps;
  const size_t k = ds.classes.size();
  const size_t per_class = std::min<size_t>(caps.samples_per_class, k > kConfusionGridClasses ? 1 : (k > 8 ? 3 : 4));
  s << "<h2 id=\"samples\">Sample photos of every class</h2>\n";
  std::vector<std::vector<size_t>> of_class(std::min(k, caps.classes));
  for (size_t i = 0; i < ds.size(); ++i)
    if ((size_t)ds.labels[i] < of_class.size()) of_class[(size_t)ds.labels[i]].push_back(i);
  for (size_t c = 0; c < of_class.size(); ++c) {
    const auto& v = of_class[c];
    s << "<h3 id=\"class-" << c << "\">" << cname(ds, c) << " (" << v.size() << " images)</h3>\n"
      << "<div class=\"cards\">\n";
    const size_t n = std::min(per_class, v.size());
    for (size_t q = 0; q < n; ++q) s << report_photo_card(thumbs, ds, v[q * v.size() / n], "", "", "");
    s << "</div>\n";
  }
  if (k > caps.classes)
    s << "<p class=\"note\">The first " << caps.classes << " of " << k << " classes are shown.</p>\n";
}

void section_network(std::ostringstream& s, const ReportInput& in) {
  if (!in.plan || !in.params) return;
  const tv::ModelPlan& plan = *in.plan;
  const LoadedModel m = decode_model(encode_float_blob(plan, in.params, in.ds->classes, ""), "the model");
  const nlohmann::json info = nlohmann::json::parse(info_json(m, InfoRequest{"the model", 0, ""}));
  s << "<h2 id=\"network\">The network</h2>\n<table><tr><th class=\"n\">#</th><th>layer</th><th>output</th><th "
       "class=\"n\">parameters</th><th class=\"n\">float bytes</th><th class=\"n\">int8 bytes</th></tr>\n";
  s << "<tr><td></td><td>input</td><td>" << plan.input.h << "x" << plan.input.w << "x" << plan.input.c
    << "</td><td></td><td></td><td></td></tr>\n";
  for (const auto& l : info["layers"]) {
    const std::string detail = l["detail"].get<std::string>();
    s << "<tr><td class=\"n\">" << l["index"].get<int>() << "</td><td>" << esc(l["type"].get<std::string>())
      << (detail.empty() ? "" : " " + esc(detail)) << "</td><td>" << l["output"][0].get<int>() << "x"
      << l["output"][1].get<int>() << "x" << l["output"][2].get<int>() << "</td><td class=\"n\">"
      << grouped(l["params"].get<int64_t>()) << "</td><td class=\"n\">" << grouped(l["bytes_float"].get<int64_t>())
      << "</td><td class=\"n\">" << grouped(l["bytes_int8"].get<int64_t>()) << "</td></tr>\n";
  }
  s << "<tr><th></th><th>total</th><th></th><th class=\"n\">" << grouped(info["params"].get<int64_t>())
    << "</th><th class=\"n\">" << grouped(info["bytes_float"].get<int64_t>()) << "</th><th class=\"n\">"
    << grouped(info["bytes_int8"].get<int64_t>()) << "</th></tr></table>\n";
  s << "<p>One forward pass: " << grouped((int64_t)plan.flops_forward) << " FLOPs.</p>\n";
  const auto& mem = info["memory"];
  const tv::Q8Memory q = tv::q8_memory(plan);
  s << "<table><tr><th>memory on the ESP32-S3 (bytes)</th><th class=\"n\">weights</th><th class=\"n\">work</th><th "
       "class=\"n\">total</th></tr>\n";
  s << "<tr><td>inference, float</td><td class=\"n\">" << grouped(mem["inference"]["params_bytes"].get<int64_t>())
    << "</td><td class=\"n\">" << grouped(mem["inference"]["work_bytes"].get<int64_t>()) << "</td><td class=\"n\">"
    << grouped(mem["inference"]["total_bytes"].get<int64_t>()) << "</td></tr>\n";
  s << "<tr><td>inference, int8 (after tvquant)</td><td class=\"n\">" << grouped((int64_t)q.weight_bytes)
    << "</td><td class=\"n\">" << grouped((int64_t)q.work_bytes) << "</td><td class=\"n\">"
    << grouped((int64_t)q.total_bytes) << "</td></tr>\n";
  s << "<tr><td>training on the board, 2 lanes</td><td></td><td></td><td class=\"n\">"
    << grouped(mem["training_2_lanes"]["total_bytes"].get<int64_t>()) << "</td></tr></table>\n";
}

// The filter of the misclassified photos: hides the cards whose true or predicted class is not the
// chosen one. The page reads the same without it.
const char* const kFilterScript = R"(<script>
(function(){var f=document.getElementById('wrong-filter');if(!f)return;
f.addEventListener('change',function(){var v=f.value;
document.querySelectorAll('#wrong-cards .card').forEach(function(c){
var show=v===''||c.getAttribute('data-true')===v||c.getAttribute('data-pred')===v;
c.classList.toggle('hidden',!show);});});})();
</script>
)";

}  // namespace

std::string report_class_name(const Dataset& ds, size_t c) {
  return shown(ds.classes[c], kShownNameBytes);
}

std::string report_text(const std::string& text, size_t bytes) {
  return shown(text, bytes);
}

std::string report_within_cap(size_t image_budget, size_t max_bytes,
                              const std::function<std::string(size_t budget)>& page) {
  const size_t limit = max_bytes > kReportMarkerRoom ? max_bytes - kReportMarkerRoom : 0;
  size_t budget = image_budget;
  std::string out = page(budget);
  while (out.size() > limit && budget > 0) {
    const size_t over = out.size() - limit + 4096;
    budget = budget > over ? budget - over : 0;
    out = page(budget);
  }
  return out;
}

std::string report_left_out_note(size_t left_out, size_t image_budget, size_t max_bytes) {
  if (!left_out) return "";
  return "<p class=\"note\">" + std::to_string(left_out) + " picture(s) left out: the pictures of this page are " +
         "limited to " + human_bytes(image_budget) + " so that it stays under " + human_bytes(max_bytes) + ".</p>\n";
}

std::string report_path_for(const std::string& model_path) {
  const std::string curve = curve_path_for(model_path);
  return curve.substr(0, curve.size() - std::strlen(".curve.svg")) + ".report.html";
}

namespace {

// The page with its pictures within image_budget; text_fits: its text alone is within kReportPageBytes
// (else no sentence says pictures were left out to keep its size).
std::string html_page(const ReportInput& in, size_t image_budget, const PagePlan& plan, bool text_fits) {
  std::ostringstream s;
  s << report_page_open(in.title);
  s << "<nav><a href=\"#run\">run</a>";
  if (in.kfold) s << "<a href=\"#suspects\">likely label mistakes</a>";
  s << "<a href=\"#results\">curve and confusion</a>";
  if (in.eval && in.eval->total) s << "<a href=\"#wrong\">misclassified</a>";
  s << "<a href=\"#samples\">samples</a>";
  if (in.plan && in.params) s << "<a href=\"#network\">network</a>";
  s << "<a href=\"#next\">next</a></nav>\n";
  ThumbnailMaker thumbs(*in.ds, image_budget);
  section_run(s, in, plan);
  section_suspects(s, in, thumbs, plan);
  section_results(s, in, plan);
  section_misclassified(s, in, thumbs, plan);
  section_samples(s, in, thumbs, plan);
  section_network(s, in);
  s << "<h2 id=\"next\">Next</h2>\n<pre>";
  for (const auto& c : in.next_commands) s << esc(c) << "\n";
  s << "</pre>\n";
  if (text_fits)
    s << report_left_out_note(thumbs.left_out(), image_budget, in.max_bytes);
  else if (thumbs.left_out())
    s << "<p class=\"note\">" << thumbs.left_out() << " picture(s) left out: the text of this page alone is over "
      << human_bytes(in.max_bytes) << ".</p>\n";
  s << report_page_close();
  return s.str();
}

}  // namespace

std::string report_command_line(const std::string& tool, int argc, char** argv) {
  std::string out = tool;
  for (int i = 1; i < argc; ++i) out += " " + shell_word(argv[i]);
  return out;
}

std::string report_page_open(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\">\n<title>" +
         shown(title, kShownTitleBytes) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
         shown(title, kShownTitleBytes) + "</h1>\n";
}

std::string report_page_close() {
  return std::string(kFilterScript) + "</body>\n</html>\n";
}

std::string html_report(const ReportInput& in) {
  const size_t limit = in.max_bytes > kReportMarkerRoom ? in.max_bytes - kReportMarkerRoom : 0;
  // Most pages: every list at its usual length, every picture its budget allows.
  PagePlan plan = plan_page(in, kReportCaps[0]);
  std::string page = html_page(in, in.image_budget, plan, true);
  if (page.size() <= limit) return page;
  // The text first: the first level of caps at which the page without pictures fits (at kReportMaxBytes
  // the last level always does, for any dataset); the pictures then take what is left of their budget.
  bool text_fits = false;
  for (size_t level = 0; level < kReportLevels && !text_fits; ++level) {
    plan = plan_page(in, kReportCaps[level]);
    text_fits = html_page(in, 0, plan, true).size() <= limit;
  }
  return report_within_cap(in.image_budget, in.max_bytes,
                           [&](size_t budget) { return html_page(in, budget, plan, text_fits); });
}

}  // namespace tvh
