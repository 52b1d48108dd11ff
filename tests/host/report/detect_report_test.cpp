// A detector's report page (host/report/detect_report.h): every user string escaped, the worst photos first,
// marks for right, false alarm, found and missed, and pictures left out (and said) past the budget.
#include "host/report/detect_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

size_t report_occurrences(const std::string& page, const std::string& what) {
  size_t n = 0;
  for (size_t at = page.find(what); at != std::string::npos; at = page.find(what, at + 1)) ++n;
  return n;
}

struct DetectReportPhotos {
  tvh::DetectionDataset ds;
  std::vector<tvh::PhotoDetections> photos;
  tvh::DetectionMetrics metrics;
  DetectReportPhotos() {
    ds.source = "set<&>";
    ds.format = "yolo";
    ds.classes = {"cup", "mug"};
    ds.height = ds.width = 16;
    ds.channels = 3;
    ds.paths = {"calm.jpg", "bad <script>.jpg"};
    ds.subsets = {"val", "val"};
    ds.boxes = {{{0, 0.5f, 0.5f, 0.5f, 0.5f}}, {{1, 0.25f, 0.25f, 0.3f, 0.3f}}};
    ds.photo_width = ds.photo_height = {16, 16};
    ds.pixels.assign(2 * ds.image_bytes(), 128);
    photos.resize(2);
    photos[0].truth = ds.boxes[0];
    photos[0].predicted = {{0, 0.9f, 0.5f, 0.5f}};  // right
    photos[1].truth = ds.boxes[1];
    photos[1].predicted = {{0, 0.8f, 0.8f, 0.8f}};  // a false alarm; the mug is missed
    metrics = tvh::detection_metrics(photos, 2);
  }
  tvh::DetectReportInput input() const {
    tvh::DetectReportInput in;
    in.ds = &ds;
    in.title = "det.tvb on <set>";
    in.command = "tvtrain 'set<&>' -o det.tvb";
    in.evaluated = "validation photos";
    in.idx = {0, 1};
    in.photos = &photos;
    in.metrics = &metrics;
    return in;
  }
};

TEST(DetectReport, TheWorstPhotoFirstWithEachKindOfMarkAndEveryStringEscaped) {
  const DetectReportPhotos f;
  const std::string page = tvh::detect_html_report(f.input());
  EXPECT_EQ(page.find("<script>.jpg"), std::string::npos);
  EXPECT_NE(page.find("bad &lt;script&gt;.jpg"), std::string::npos);
  EXPECT_NE(page.find("det.tvb on &lt;set&gt;"), std::string::npos);
  EXPECT_LT(page.find("bad &lt;script&gt;.jpg"), page.find("calm.jpg"));  // 2 errors before 0
  EXPECT_EQ(report_occurrences(page, "<g class=\"right\">"), 1u);
  EXPECT_EQ(report_occurrences(page, "<g class=\"false-alarm\">"), 1u);
  EXPECT_EQ(report_occurrences(page, "<g class=\"found\">"), 1u);
  EXPECT_EQ(report_occurrences(page, "<g class=\"missed\">"), 1u);
  EXPECT_EQ(report_occurrences(page, "data:image/jpeg;base64,"), 2u);
  EXPECT_NE(page.find("0 right, 1 false alarm, 1 missed"), std::string::npos);
  EXPECT_NE(page.find("F1 <b>0.500</b>"), std::string::npos);  // 1 right, 1 false alarm, 1 missed
}

TEST(DetectReport, PicturesPastTheBudgetAreLeftOutAndSaid) {
  const DetectReportPhotos f;
  tvh::DetectReportInput in = f.input();
  in.image_budget = 10;  // not even one picture
  const std::string page = tvh::detect_html_report(in);
  EXPECT_EQ(report_occurrences(page, "data:image/jpeg;base64,"), 0u);
  EXPECT_EQ(report_occurrences(page, "(picture left out: the report's size budget)"), 2u);
  EXPECT_NE(page.find("2 picture(s) left out"), std::string::npos);
  EXPECT_EQ(report_occurrences(page, "<g class=\"missed\">"), 1u);  // the marks are drawn all the same
}

}  // namespace
