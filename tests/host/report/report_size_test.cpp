// The reports' size promise at any class count (in-process, no binaries): MODEL.report.html stays under
// kReportMaxBytes with 2, 16, 200 and 1,000 classes of 255-byte names, thousands of warnings and of
// skipped files, and a confusion spread over every cell; the confusion picture turns compact past
// kConfusionGridClasses; tvquant's page keeps its cap too. Names stay escaped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/report/html_report.h"
#include "host/report/quant_report.h"
#include "host/report/report.h"
#include "host/train/training.h"

namespace {

// A dataset of k classes named with 255 bytes each (holding "<i>@&", which must come out escaped),
// 3 tiny images a class, thousands of warnings and skipped files of long paths.
tvh::Dataset report_size_dataset(size_t k) {
  tvh::Dataset ds;
  ds.source = "/nonexistent/" + std::string(200, 'd');
  ds.height = ds.width = 8;
  ds.channels = 1;
  for (size_t c = 0; c < k; ++c) {
    std::string name = "<i>@&" + std::to_string(c) + "_";
    name += std::string(255 - name.size(), 'n');
    ds.classes.push_back(name);
    for (int i = 0; i < 3; ++i) {
      ds.labels.push_back((int)c);
      ds.paths.push_back(ds.source + "/" + name + "/img_" + std::to_string(i) + ".jpg");
      ds.file_hashes.push_back(c * 3 + (size_t)i + 1);
    }
  }
  ds.pixels.assign(ds.size() * ds.image_bytes(), 128);
  for (int w = 0; w < 5000; ++w)
    ds.warnings.push_back("the folder " + std::string(250, 'e') + std::to_string(w) + " is empty");
  for (int f = 0; f < 5000; ++f)
    ds.skipped.push_back({"p" + std::to_string(f), "not_an_image", std::string(600, 's') + std::to_string(f)});
  return ds;
}

// Every image predicted as the next class: the mistakes spread over k cells.
tvh::EvalResult report_size_eval(const tvh::Dataset& ds) {
  const size_t k = ds.classes.size();
  tvh::EvalResult r;
  r.confusion.assign(k * k, 0);
  for (size_t i = 0; i < ds.size(); ++i) {
    const int t = ds.labels[i], p = i % 3 == 0 ? t : (int)((size_t)(t + 1) % k);
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

}  // namespace

TEST(ReportSize, TheCapHoldsAtAnyClassCount) {
  for (size_t k : {2u, 16u, 200u, 1000u}) {
    SCOPED_TRACE(std::to_string(k) + " classes");
    const tvh::Dataset ds = report_size_dataset(k);
    const tvh::EvalResult eval = report_size_eval(ds);
    tvh::ReportInput in;
    in.ds = &ds;
    in.title = "model.tvb: " + std::string(300, 't');
    in.command = "tvtrain " + std::string(5000, 'c');
    in.warnings = std::vector<std::string>(3000, std::string(300, 'w'));
    in.evaluated = "validation images";
    in.eval = &eval;
    const std::string page = tvh::html_report(in);
    EXPECT_LE(page.size(), tvh::kReportMaxBytes);
    EXPECT_EQ(page.find("<i>@"), std::string::npos)
        << "a class name reached the page unescaped: "
        << page.substr(page.find("<i>@") > 150 ? page.find("<i>@") - 150 : 0, 300);
    EXPECT_NE(page.find(std::to_string(k) + " classes"), std::string::npos);
    const std::string svg = tvh::confusion_svg(ds.classes, eval.confusion, "confusion");
    EXPECT_LE(svg.size(), k <= tvh::kConfusionGridClasses ? size_t(2) << 20 : size_t(64) << 10);
    EXPECT_EQ(svg.find("most frequent confusions") != std::string::npos, k > tvh::kConfusionGridClasses);
    EXPECT_EQ(svg.find("<i>@"), std::string::npos);
    // tvquant's page: every image compared, float and int8 differing on a third
    tvh::QuantReportInput q;
    q.ds = &ds;
    q.title = in.title;
    q.command = in.command;
    for (size_t i = 0; i < ds.size(); ++i) {
      q.idx.push_back((int)i);
      q.float_pred.push_back(ds.labels[i]);
      q.int8_pred.push_back(i % 3 == 1 ? eval.predicted[i] : ds.labels[i]);
    }
    const std::string qpage = tvh::quant_html_report(q);
    EXPECT_LE(qpage.size(), tvh::kReportMaxBytes);
    EXPECT_EQ(qpage.find("<i>@"), std::string::npos);
  }
}
