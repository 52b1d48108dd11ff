// The reports' size promise at any class count (in-process, no binaries): MODEL.report.html, tvquant's page
// and MODEL.confusion.svg stay under the caps their code states (kReportMaxBytes with tvtrain's side-output
// marker, kReportPageBytes, kConfusionSvgMaxBytes, kCurveSvgMaxBytes) with 2, 16, 200 and 1,000 classes of
// 255-byte names (plain, or of quotes: the worst escapes), thousands of warnings and of skipped files,
// 100,000 epochs, mistakes in every row and photos competing for the pictures' budget. Every class count
// is still named, the confusion picture is the grid up to kConfusionGridClasses and its compact form past
// it, every picture is a balanced <svg> ... </svg>, in-page links have their anchors, names stay escaped,
// and a page says pictures were left out for its size only when its text alone fits.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/photos/dataset.h"
#include "host/report/html_report.h"
#include "host/report/quant_report.h"
#include "host/report/report.h"
#include "host/train/training.h"

namespace {

// A dataset of k classes named with 255 bytes each (starting "<i>@&", which must come out escaped; the
// rest `fill`), `per_class` random 64x64x3 images a class (their pictures more than the budget), 5,000
// warnings and 5,000 skipped files of long text.
tvh::Dataset report_size_dataset(size_t k, char fill, size_t per_class) {
  tvh::Dataset ds;
  ds.source = "/nonexistent/" + std::string(200, fill);
  ds.height = ds.width = 64;
  ds.channels = 3;
  for (size_t c = 0; c < k; ++c) {
    std::string name = "<i>@&" + std::to_string(c) + "_";
    name += std::string(255 - name.size(), fill);
    ds.classes.push_back(name);
    for (size_t i = 0; i < per_class; ++i) {
      ds.labels.push_back((int)c);
      ds.paths.push_back(ds.source + "/" + name + "/" + std::string(200, fill) + std::to_string(i) + ".jpg");
      ds.file_hashes.push_back(c * per_class + i + 1);
    }
  }
  ds.pixels.resize(ds.size() * ds.image_bytes());
  uint32_t x = 12345;
  for (auto& p : ds.pixels) {
    x = x * 1664525u + 1013904223u;
    p = (uint8_t)(x >> 24);
  }
  for (int w = 0; w < 5000; ++w)
    ds.warnings.push_back("the folder " + std::string(250, fill) + std::to_string(w) + " is empty");
  for (int f = 0; f < 5000; ++f)
    ds.skipped.push_back({"p" + std::to_string(f), "not_an_image", std::string(600, fill) + std::to_string(f)});
  return ds;
}

// Every third image right, the others predicted as another class (spread over every cell of a row):
// mistakes in every row.
tvh::EvalResult report_size_eval(const tvh::Dataset& ds) {
  const size_t k = ds.classes.size();
  tvh::EvalResult r;
  r.confusion.assign(k * k, 0);
  for (size_t i = 0; i < ds.size(); ++i) {
    const int t = ds.labels[i], p = i % 3 == 0 ? t : (int)((size_t(t) + 1 + i / 3 % (k - 1)) % k);
    r.index.push_back((int)i);
    r.predicted.push_back(p);
    r.confidence.push_back(0.6f);
    for (size_t j = 0; j < k; ++j) r.probs.push_back(j == (size_t)p ? 0.6f : 0.4f / (float)(k - 1));
    ++r.confusion[(size_t)t * k + (size_t)p];
    r.correct += p == t;
    ++r.total;
  }
  return r;
}

size_t report_size_count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// Every value of `attr="..."` in the text, as a set.
std::set<std::string> report_size_values(const std::string& text, const std::string& attr) {
  std::set<std::string> out;
  const std::string key = attr + "=\"";
  for (size_t at = 0; (at = text.find(key, at)) != std::string::npos;) {
    at += key.size();
    out.insert(text.substr(at, text.find('"', at) - at));
  }
  return out;
}

// `epochs` epochs of a wobbling curve with a validation split.
std::vector<tvh::EpochRecord> report_size_history(int epochs) {
  std::vector<tvh::EpochRecord> h;
  for (int e = 1; e <= epochs; ++e) {
    tvh::EpochRecord r;
    r.epoch = e;
    r.train_loss = 2.0 / e + (e % 13) * 0.02;
    r.train_acc = 0.3 + (e % 11) * 0.05;
    r.val_acc = 0.25 + (e % 7) * 0.05;
    r.val_loss = 2.2 / e;
    h.push_back(r);
  }
  return h;
}

// What every page and picture keeps: balanced SVGs, no class name unescaped.
void report_size_well_formed(const std::string& text) {
  EXPECT_EQ(report_size_count(text, "<svg "), report_size_count(text, "</svg>"));
  EXPECT_EQ(text.find("<i>@"), std::string::npos) << "a class name unescaped";
  EXPECT_EQ(text.find("<i>@&"), std::string::npos);
}

}  // namespace

TEST(ReportSize, TheCapHoldsAtAnyClassCount) {
  const std::vector<tvh::EpochRecord> history = report_size_history(100000);
  for (const char fill : {'n', '"'}) {
    for (const size_t k : {2u, 16u, 32u, 200u, 1000u}) {
      SCOPED_TRACE(std::to_string(k) + " classes, names of '" + std::string(1, fill) + "'");
      const tvh::Dataset ds = report_size_dataset(k, fill, std::max<size_t>(3, 600 / k));
      const tvh::EvalResult eval = report_size_eval(ds);
      tvh::ReportInput in;
      in.ds = &ds;
      in.title = "model.tvb: " + std::string(3000, fill);
      in.command = "tvtrain " + std::string(5000, fill);
      in.warnings = std::vector<std::string>(3000, std::string(300, fill));
      in.evaluated = "out-of-fold predictions of 5 folds";
      in.eval = &eval;
      in.history = &history;
      in.kfold = true;
      for (size_t i = 0; i < ds.size() && i < 400; ++i)
        in.suspects.push_back({(int)i, ds.labels[i], (int)((size_t)(ds.labels[i] + 1) % k), 0.1f, 0.8f});
      const std::string page = tvh::html_report(in);
      EXPECT_LE(page.size(), tvh::kReportPageBytes);
      EXPECT_LE(tvh::with_side_output_marker(page).size(), tvh::kReportMaxBytes);
      report_size_well_formed(page);
      EXPECT_NE(page.find(", " + std::to_string(k) + " classes, "), std::string::npos);
      if (k > tvh::kReportListedClasses) {
        EXPECT_NE(page.find(std::to_string(k - tvh::kReportListedClasses) + " more classes"), std::string::npos);
      }
      // the grid up to kConfusionGridClasses, the compact form past it
      const bool compact = k > tvh::kConfusionGridClasses;
      EXPECT_EQ(page.find("most frequent confusions") != std::string::npos, compact);
      EXPECT_EQ(page.find(">predicted class</text>") != std::string::npos, !compact);
      // pictures are there, and said to be left out for the page's size only when the text fits
      EXPECT_NE(page.find("src=\"data:image/jpeg;base64,"), std::string::npos);
      EXPECT_EQ(page.find("text of this page alone is over"), std::string::npos);
      if (page.find("picture(s) left out: the pictures of this page are limited") != std::string::npos) {
        tvh::ReportInput text_only = in;
        text_only.image_budget = 0;
        EXPECT_LE(tvh::html_report(text_only).size(), tvh::kReportPageBytes);
      }
      // every in-page link has its anchor
      const std::set<std::string> ids = report_size_values(page, "id");
      for (const auto& l : report_size_values(page, "href"))
        if (l[0] == '#') {
          EXPECT_TRUE(ids.count(l.substr(1))) << l << " has no anchor";
        }

      // tvquant's page: every image compared, float and int8 differing on a third
      tvh::QuantReportInput q;
      q.ds = &ds;
      q.title = in.title;
      q.command = in.command;
      q.calibration = "min-max on 100 images of " + std::string(5000, fill);
      q.compared_on = "the images of " + std::string(5000, fill);
      for (size_t i = 0; i < ds.size(); ++i) {
        q.idx.push_back((int)i);
        q.float_pred.push_back(ds.labels[i]);
        q.int8_pred.push_back(i % 3 == 1 ? eval.predicted[i] : ds.labels[i]);
      }
      const std::string qpage = tvh::quant_html_report(q);
      EXPECT_LE(qpage.size(), tvh::kReportPageBytes);
      report_size_well_formed(qpage);
      EXPECT_NE(qpage.find("src=\"data:image/jpeg;base64,"), std::string::npos);
      if (k > tvh::kReportListedClasses) {
        EXPECT_NE(qpage.find("The first " + std::to_string(tvh::kReportListedClasses) + " of " + std::to_string(k) +
                             " classes are listed"),
                  std::string::npos);
      }
    }
  }
}

// MODEL.confusion.svg alone (tvtrain writes it without links; the page's copy links): under
// kConfusionSvgMaxBytes at the grid's largest class count and past it, with the worst names (quotes,
// zero-width marks that take bytes but no column) and a long title.
TEST(ReportSize, ConfusionPictureStaysUnderItsCap) {
  std::string zero_width;
  while (zero_width.size() + 3 <= 240) zero_width += "\xE2\x80\x8B";  // U+200B ZERO WIDTH SPACE
  for (const std::string& body : {std::string(250, '"'), zero_width}) {
    for (const size_t k : {2u, 16u, 32u, 33u, 200u, 1000u}) {
      SCOPED_TRACE(std::to_string(k) + " classes");
      ASSERT_EQ(tvh::kConfusionGridClasses, 32u);
      std::vector<std::string> names;
      for (size_t c = 0; c < k; ++c) names.push_back("<i>@&" + std::to_string(c) + body);
      // every cell counted: five-digit counts, mistakes in every cell
      std::vector<int> cm(k * k, 0);
      for (size_t i = 0; i < k; ++i)
        for (size_t j = 0; j < k; ++j) cm[i * k + j] = i == j ? 99999 : (int)(1 + (i * 7 + j) % 97);
      const std::string title = "tinyvision on " + body + body + body + " (validation images)";
      for (const bool links : {false, true}) {
        const std::string svg =
            tvh::confusion_svg(names, cm, title,
                               links ? std::function<std::string(size_t, size_t)>([](size_t i, size_t j) {
                                 return "#cell-" + std::to_string(i) + "-" + std::to_string(j);
                               })
                                     : nullptr);
        EXPECT_LE(svg.size(), tvh::kConfusionSvgMaxBytes);
        EXPECT_LE(tvh::with_side_output_marker(svg).size(), tvh::kConfusionSvgMaxBytes);
        report_size_well_formed(svg);
        EXPECT_EQ(report_size_count(svg, "<svg "), 1u);
        EXPECT_EQ(svg.find("<svg "), 0u);
        EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
        if (k <= tvh::kConfusionGridClasses) {
          EXPECT_EQ(report_size_count(svg, "<rect "), k * k + 1);  // the cells and the background
          EXPECT_EQ(svg.find("most frequent confusions"), std::string::npos);
        } else {
          const size_t confusions = k * k - k;
          EXPECT_NE(svg.find(std::to_string(k) + " classes"), std::string::npos);
          EXPECT_NE(svg.find("the 30 most frequent confusions of " + std::to_string(confusions)), std::string::npos);
          EXPECT_NE(svg.find("the 30 of " + std::to_string(k) + " evaluated classes with the lowest accuracy"),
                    std::string::npos);
          EXPECT_EQ(report_size_count(svg, "<rect "), 2 * tvh::kConfusionListed + 1);
        }
      }
    }
  }
}

// The curve picture draws at most 4 points a pixel column: 100,000 epochs fit under kCurveSvgMaxBytes,
// the first and last epochs still drawn.
TEST(ReportSize, CurvePictureStaysUnderItsCap) {
  for (const int epochs : {1, 50, 100000}) {
    const std::vector<tvh::EpochRecord> history = report_size_history(epochs);
    const std::string svg = tvh::curve_svg(history, "tinyvision on " + std::string(3000, '"'));
    EXPECT_LE(svg.size(), tvh::kCurveSvgMaxBytes) << epochs;
    EXPECT_EQ(report_size_count(svg, "<polyline "), 4u);
    report_size_well_formed(svg);
    size_t points = 0;
    for (const auto& p : report_size_values(svg, "points")) points += report_size_count(p, ",");
    // every epoch drawn while they are fewer than the pixel columns (each series' points differ)
    if (epochs <= 50) {
      EXPECT_EQ(points, (size_t)(4 * epochs));
    }
    EXPECT_LE(points, 4u * 4u * 577u);
  }
}

// The heaviest text the grid allows: 32 classes of quote names, 1,280 mistakes over all 992 cells, 400
// suspects, 100,000 epochs. The page's text fits first (its lists shortened when they must be, the counts
// of the rest said); the pictures take what is left, and the page says so truthfully.
TEST(ReportSize, TextComesFirstThenPictures) {
  const tvh::Dataset ds = report_size_dataset(tvh::kConfusionGridClasses, '"', 60);
  const tvh::EvalResult eval = report_size_eval(ds);
  const std::vector<tvh::EpochRecord> history = report_size_history(100000);
  tvh::ReportInput in;
  in.ds = &ds;
  in.title = "model.tvb: " + std::string(3000, '"');
  in.command = "tvtrain " + std::string(5000, '"');
  in.evaluated = "out-of-fold predictions of 5 folds";
  in.eval = &eval;
  in.history = &history;
  in.kfold = true;
  for (size_t i = 0; i < ds.size() && i < 400; ++i)
    in.suspects.push_back({(int)i, ds.labels[i], (ds.labels[i] + 1) % (int)tvh::kConfusionGridClasses, 0.1f, 0.8f});
  // at the real cap, and at lower ones that the text fits only with shorter lists
  for (const size_t cap : {tvh::kReportMaxBytes, size_t(900000), size_t(600000)}) {
    SCOPED_TRACE("cap " + std::to_string(cap));
    in.max_bytes = cap;
    const std::string page = tvh::html_report(in);
    tvh::ReportInput text_only = in;
    text_only.image_budget = 0;
    const std::string text = tvh::html_report(text_only);
    EXPECT_LE(page.size(), cap - tvh::kReportMarkerRoom);
    EXPECT_LE(text.size(), cap - tvh::kReportMarkerRoom);
    report_size_well_formed(page);
    EXPECT_NE(page.find("src=\"data:image/jpeg;base64,"), std::string::npos);
    EXPECT_NE(page.find("picture(s) left out: the pictures of this page are limited to "), std::string::npos);
    EXPECT_NE(page.find("so that it stays under " + tvh::human_bytes(cap)), std::string::npos);
    EXPECT_EQ(page.find("text of this page alone is over"), std::string::npos);
    EXPECT_NE(page.find(", 32 classes, "), std::string::npos);
    const std::set<std::string> ids = report_size_values(page, "id");
    for (const auto& l : report_size_values(page, "href")) {
      if (l[0] == '#') {
        EXPECT_TRUE(ids.count(l.substr(1))) << l << " has no anchor";
      }
    }
    if (cap < tvh::kReportMaxBytes) {
      EXPECT_NE(page.find(" cells are listed"), std::string::npos) << "lists shortened, the rest counted";
    }
  }
  // a cap that even the shortest lists do not fit: pictures left out, and said to be for the text
  in.max_bytes = 60000;
  const std::string page = tvh::html_report(in);
  EXPECT_EQ(page.find("src=\"data:"), std::string::npos);
  EXPECT_EQ(page.find("so that it stays under"), std::string::npos);
  EXPECT_NE(page.find("picture(s) left out: the text of this page alone is over 58.6 KB"), std::string::npos);
}
