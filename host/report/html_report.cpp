#include "host/report/html_report.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
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
// What keeps the text of the page under kReportMaxBytes for any dataset (1,000 classes of 255-byte names,
// thousands of warnings): class names shown to 60 bytes, lists of classes, warnings, confusion cells and
// sample classes capped, each with the count of the rest (every figure is in --json).
constexpr size_t kShownNameBytes = 60, kListedClasses = kReportListedClasses, kListedWarnings = 40,
                 kShownLineBytes = 400;
constexpr size_t kListedCells = 100;

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

// A path as shown: whole, or its start and end around "...", cut between UTF-8 characters.
std::string shown_path(const std::string& path, size_t limit = kShownPathBytes) {
  if (path.size() <= limit) return path;
  size_t head = limit / 3, tail = path.size() - (limit - head - 3);
  while (head > 0 && ((unsigned char)path[head] & 0xC0) == 0x80) --head;
  while (tail < path.size() && ((unsigned char)path[tail] & 0xC0) == 0x80) ++tail;
  return path.substr(0, head) + "..." + path.substr(tail);
}

// Photo i's path as shown: from inside the dataset's folder (class folder and file name), shortened.
std::string shown_name(const Dataset& ds, size_t i) {
  const std::string& path = ds.paths[i];
  const bool inside = path.size() > ds.source.size() + 1 && path.compare(0, ds.source.size(), ds.source) == 0 &&
                      path[ds.source.size()] == '/';
  return shown_path(inside ? path.substr(ds.source.size() + 1) : path);
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
  s << "</div><figcaption><span class=\"wrap\">" << esc(shown_name(ds, i)) << "</span><br>" << caption_html
    << "</figcaption></figure>\n";
  return s.str();
}

namespace {

void section_run(std::ostringstream& s, const ReportInput& in) {
  const Dataset& ds = *in.ds;
  s << "<h2 id=\"run\">The run</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v_html) {
    s << "<tr><th>" << k << "</th><td>" << v_html << "</td></tr>\n";
  };
  row("command", "<code>" + esc(shown_path(in.command, 2000)) + "</code>");
  row("dataset", esc(shown_path(ds.source)) + " &mdash; " + std::to_string(ds.size()) + " images, " +
                     std::to_string(ds.classes.size()) + " classes, " + std::to_string(ds.width) + "x" +
                     std::to_string(ds.height) + "x" + std::to_string(ds.channels) + " model input");
  std::string classes;
  const std::vector<size_t> counts = ds.class_counts();
  for (size_t c = 0; c < ds.classes.size() && c < kListedClasses; ++c)
    classes += std::string(c ? ", " : "") + "<a href=\"#class-" + std::to_string(c) + "\">" + cname(ds, c) + "</a> " +
               std::to_string(counts[c]);
  if (ds.classes.size() > kListedClasses)
    classes += " and " + std::to_string(ds.classes.size() - kListedClasses) + " more classes (--json)";
  row("classes (images)", classes);
  std::map<std::string, size_t> by_reason;
  for (const auto& f : ds.skipped) ++by_reason[f.reason];
  std::string skipped = ds.skipped.empty() ? "none" : std::to_string(ds.skipped.size()) + ":";
  for (const auto& [reason, n] : by_reason) {
    std::string words = reason;
    std::replace(words.begin(), words.end(), '_', ' ');
    skipped += (skipped.back() == ':' ? " " : ", ") + std::to_string(n) + " " + esc(words);
  }
  if (!ds.skipped.empty()) {
    skipped += "<ul>";
    for (size_t n = 0; n < ds.skipped.size() && n < 20; ++n)
      skipped += "<li>" + esc(shown_path(ds.skipped[n].message, kShownLineBytes)) + "</li>";
    if (ds.skipped.size() > 20)
      skipped += "<li>... and " + std::to_string(ds.skipped.size() - 20) + " more (--json)</li>";
    skipped += "</ul>";
  }
  row("files not used", skipped);
  std::vector<std::string> warnings = ds.warnings;
  warnings.insert(warnings.end(), in.warnings.begin(), in.warnings.end());
  std::string w = warnings.empty() ? "none" : "<ul>";
  for (size_t n = 0; n < warnings.size() && n < kListedWarnings; ++n)
    w += "<li>" + esc(shown_path(warnings[n], kShownLineBytes)) + "</li>";
  if (!warnings.empty()) w += more_items(warnings.size(), kListedWarnings) + "</ul>";
  row("warnings", w);
  row("preset and recipe", esc(in.preset) + (in.recipe.empty() ? "" : ": " + esc(in.recipe)));
  row("seed", std::to_string(in.seed));
  row("started", esc(in.started) + ", took " + fmt("%.1f", in.seconds) + " s");
  if (in.eval && in.eval->total) {
    const std::pair<double, double> ci = wilson_interval(in.eval->correct, in.eval->total);
    row("accuracy", pct1(in.eval->accuracy()) + " (" + std::to_string(in.eval->correct) + "/" +
                        std::to_string(in.eval->total) + " " + esc(in.evaluated) + "), 95 % interval " +
                        pct1(ci.first) + " &ndash; " + pct1(ci.second));
  }
  s << "</table>\n";
}

void section_results(std::ostringstream& s, const ReportInput& in) {
  const Dataset& ds = *in.ds;
  s << "<h2 id=\"results\">Curve and confusion matrix</h2>\n";
  if (in.history && !in.history->empty())
    s << "<div class=\"svg\">" << curve_svg(*in.history, in.title, in.kept_epoch) << "</div>\n";
  if (!in.eval || in.eval->total == 0) {
    s << "<p class=\"note\">No image was evaluated (no validation split): use --kfold to measure on every image.</p>\n";
    return;
  }
  s << "<p class=\"note\">Rows: true class; columns: predicted, on the " << esc(in.evaluated)
    << ". Click a cell to see its photos.</p>\n";
  s << "<div class=\"svg\">"
    << confusion_svg(ds.classes, in.eval->confusion, "confusion on the " + in.evaluated,
                     [](size_t i, size_t j) { return "#" + cell_anchor(i, j); })
    << "</div>\n";
  const size_t k = ds.classes.size();
  const auto m = class_metrics(in.eval->confusion, k);
  s << "<table><tr><th>class</th><th class=\"n\">precision</th><th class=\"n\">95 % interval</th><th "
       "class=\"n\">recall</th><th class=\"n\">95 % interval</th><th class=\"n\">F1</th><th "
       "class=\"n\">images</th></tr>\n";
  for (size_t c = 0; c < k && c < kListedClasses; ++c) {
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
  if (k > kListedClasses)
    s << "<p class=\"note\">The first " << kListedClasses << " of " << k
      << " classes are listed (--json has all).</p>\n";
  s << "<p class=\"note\">Intervals: Wilson 95 %; wide intervals mean few images: add photos or "
       "measure with --kfold.</p>\n";
}

void section_suspects(std::ostringstream& s, const ReportInput& in, ThumbnailMaker& thumbs) {
  if (!in.kfold) return;
  const Dataset& ds = *in.ds;
  s << "<h2 id=\"suspects\">Likely label mistakes</h2>\n";
  if (in.suspects.empty()) {
    s << "<p>None found: no photo's out-of-fold prediction confidently names another class.</p>\n";
    return;
  }
  s << "<p>" << in.suspects.size()
    << " photo(s) whose folder's class has a low out-of-fold probability while another class is likelier "
       "(docs/suspect-labels.md). Check them first: move a photo to its right folder, or delete it.";
  if (in.suspects.size() > kReportMaxPhotos) s << " The " << kReportMaxPhotos << " most likely are shown.";
  s << "</p>\n<div class=\"cards\">\n";
  for (size_t n = 0; n < in.suspects.size() && n < kReportMaxPhotos; ++n) {
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

void section_misclassified(std::ostringstream& s, const ReportInput& in, ThumbnailMaker& thumbs) {
  if (!in.eval || in.eval->total == 0) return;
  const Dataset& ds = *in.ds;
  const EvalResult& r = *in.eval;
  const size_t k = ds.classes.size();
  const std::vector<size_t> wrong = wrong_worst_first(r, ds);
  s << "<h2 id=\"wrong\">Misclassified photos</h2>\n";
  if (wrong.empty()) {
    s << "<p>None: every one of the " << r.total << " " << esc(in.evaluated) << " is classified right.</p>\n";
    return;
  }
  s << "<p>" << wrong.size() << " of " << r.total << " " << esc(in.evaluated)
    << ", worst first (lowest probability of the true class)";
  if (wrong.size() > kReportMaxPhotos) s << "; the " << kReportMaxPhotos << " worst are shown";
  s << ". Each shows the photo and the model's input at its real size.</p>\n";
  if (k <= kListedClasses) {
    s << "<p><label>Show class: <select id=\"wrong-filter\"><option value=\"\">all</option>";
    for (size_t c = 0; c < k; ++c) s << "<option value=\"" << c << "\">" << cname(ds, c) << "</option>";
    s << "</select></label></p>\n";
  }
  s << "<div class=\"cards\" id=\"wrong-cards\">\n";
  std::vector<std::vector<std::string>> by_cell(k * k);
  std::vector<size_t> cell_total(k * k, 0);
  for (size_t n = 0; n < wrong.size(); ++n) {
    const size_t e = wrong[n], d = (size_t)r.index[e];
    const size_t t = (size_t)ds.labels[d], p = (size_t)r.predicted[e];
    const std::string id = "m-" + std::to_string(n);
    if (++cell_total[t * k + p] <= kNamesPerCell && n < kNamesInCells) {
      const std::string name = esc(shown_name(ds, d));
      by_cell[t * k + p].push_back(n < kReportMaxPhotos ? "<a href=\"#" + id + "\">" + name + "</a>" : name);
    }
    if (n >= kReportMaxPhotos) continue;
    const float pt = r.probs.size() == r.index.size() * k ? r.probs[e * k + t] : 0.f;
    const std::string cap = "true <b>" + cname(ds, t) + "</b> (" + pct1(pt) + "), predicted <b>" + cname(ds, p) +
                            "</b> (" + pct1(r.confidence[e]) + ")";
    s << report_photo_card(thumbs, ds, d, id, cap,
                           " data-true=\"" + std::to_string(t) + "\" data-pred=\"" + std::to_string(p) + "\"");
  }
  s << "</div>\n<h3>By cell of the confusion matrix</h3>\n";
  // every cell the confusion picture links to; past its grid (compact form) the fullest kListedCells
  std::vector<size_t> cells;
  for (size_t c = 0; c < k * k; ++c)
    if (c / k != c % k && cell_total[c] > 0) cells.push_back(c);
  const bool grid = k <= kConfusionGridClasses;
  if (!grid)
    std::stable_sort(cells.begin(), cells.end(), [&](size_t a, size_t b) { return cell_total[a] > cell_total[b]; });
  const size_t listed = grid ? cells.size() : std::min(cells.size(), kListedCells);
  for (size_t n = 0; n < listed; ++n) {
    const size_t t = cells[n] / k, p = cells[n] % k, c = cells[n];
    s << "<h3 id=\"" << cell_anchor(t, p) << "\">true " << cname(ds, t) << ", predicted " << cname(ds, p) << ": "
      << cell_total[c] << "</h3>\n<ul>";
    for (const auto& item : by_cell[c]) s << "<li class=\"wrap\">" << item << "</li>";
    s << more_items(cell_total[c], by_cell[c].size()) << "</ul>\n";
  }
  if (cells.size() > listed)
    s << "<p class=\"note\">The " << listed << " fullest of " << cells.size()
      << " cells are listed (--json has every prediction).</p>\n";
}

// A few photos of every class, spread over the class (always shown, so a run without mistakes still
// shows its data). The diagonal cells of the confusion matrix link here.
void section_samples(std::ostringstream& s, const ReportInput& in, ThumbnailMaker& thumbs) {
  const Dataset& ds = *in.ds;
  const size_t k = ds.classes.size();
  const size_t per_class = k > kConfusionGridClasses ? 1 : (k > 8 ? 3 : 4);
  s << "<h2 id=\"samples\">Sample photos of every class</h2>\n";
  std::vector<std::vector<size_t>> of_class(k);
  for (size_t i = 0; i < ds.size(); ++i) of_class[(size_t)ds.labels[i]].push_back(i);
  for (size_t c = 0; c < k && c < kListedClasses; ++c) {
    const auto& v = of_class[c];
    s << "<h3 id=\"class-" << c << "\">" << cname(ds, c) << " (" << v.size() << " images)</h3>\n"
      << "<div class=\"cards\">\n";
    const size_t n = std::min(per_class, v.size());
    for (size_t q = 0; q < n; ++q) s << report_photo_card(thumbs, ds, v[q * v.size() / n], "", "", "");
    s << "</div>\n";
  }
  if (k > kListedClasses)
    s << "<p class=\"note\">The first " << kListedClasses << " of " << k << " classes are shown.</p>\n";
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
  return esc(shown_path(ds.classes[c], kShownNameBytes));
}

std::string report_path_for(const std::string& model_path) {
  const std::string curve = curve_path_for(model_path);
  return curve.substr(0, curve.size() - std::strlen(".curve.svg")) + ".report.html";
}

namespace {

std::string html_page(const ReportInput& in, size_t image_budget) {
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
  section_run(s, in);
  section_suspects(s, in, thumbs);
  section_results(s, in);
  section_misclassified(s, in, thumbs);
  section_samples(s, in, thumbs);
  section_network(s, in);
  s << "<h2 id=\"next\">Next</h2>\n<pre>";
  for (const auto& c : in.next_commands) s << esc(c) << "\n";
  s << "</pre>\n";
  if (thumbs.left_out())
    s << "<p class=\"note\">" << thumbs.left_out() << " picture(s) left out to keep this page under "
      << human_bytes(kReportMaxBytes) << ".</p>\n";
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
         esc(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" + esc(title) + "</h1>\n";
}

std::string report_page_close() {
  return std::string(kFilterScript) + "</body>\n</html>\n";
}

std::string html_report(const ReportInput& in) {
  // The pictures' budget, and less when the text (long names, many classes) would take the page
  // over kReportMaxBytes.
  size_t budget = in.image_budget;
  std::string page = html_page(in, budget);
  while (page.size() > kReportMaxBytes && budget > 0) {
    const size_t over = page.size() - kReportMaxBytes + 4096;
    budget = budget > over ? budget - over : 0;
    page = html_page(in, budget);
  }
  return page;
}

}  // namespace tvh
