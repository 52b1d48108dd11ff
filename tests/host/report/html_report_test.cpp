// The HTML report (host/report/html_report.h) built in-process from a constructed dataset: every user string
// escaped, every in-page link has its anchor, no remote URL, pictures within the byte budget.
#include "host/report/html_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "host/photos/image.h"
#include "host/photos/thumbnails.h"
#include "photo_fixture.h"
#include "test_support.h"
#include "tv/model/model.h"
#include "tv/train/presets.h"

namespace {

// A dataset of k classes, n photos each, 16x16x3, whose files do not exist (their originals are
// "not readable again"); class names and paths carry markup.
tvh::Dataset markup_dataset(size_t k, size_t n) {
  tvh::Dataset ds;
  ds.source = "/no/such/<dir>";
  ds.height = ds.width = 16;
  ds.channels = 3;
  for (size_t c = 0; c < k; ++c) ds.classes.push_back("<script>alert(" + std::to_string(c) + ")</script>&\"'");
  for (size_t c = 0; c < k; ++c) {
    for (size_t i = 0; i < n; ++i) {
      ds.labels.push_back((int)c);
      ds.paths.push_back(ds.source + "/c" + std::to_string(c) + "/\"><img src=x onerror=alert(1)>" + std::to_string(i) +
                         ".jpg");
    }
  }
  ds.pixels.resize(ds.size() * ds.image_bytes());
  for (size_t b = 0; b < ds.pixels.size(); ++b) ds.pixels[b] = (uint8_t)(b * 7919 % 251);
  ds.warnings.push_back("a warning with <b>markup</b>");
  return ds;
}

// An evaluation of every image where every third image is predicted as the next class.
tvh::EvalResult every_third_wrong(const tvh::Dataset& ds) {
  tvh::EvalResult r;
  const int k = (int)ds.classes.size();
  for (size_t i = 0; i < ds.size(); ++i) {
    std::vector<float> p((size_t)k, 0.1f / (float)k);
    const int truth = ds.labels[i];
    p[(size_t)(i % 3 == 0 ? (truth + 1) % k : truth)] += 0.9f;
    r.add((int)i, truth, p.data(), k);
  }
  return r;
}

}  // namespace

TEST(HtmlReport, EscapesEveryUserStringAndLinksResolve) {
  for (size_t k : {2, 6, 16}) {
    const tvh::Dataset ds = markup_dataset(k, 6);
    const tvh::EvalResult r = every_third_wrong(ds);
    tvh::ReportInput in;
    in.ds = &ds;
    in.title = "m.tvb: <i>title</i>";
    in.command = "tvtrain '<dir>' -o m.tvb";
    in.evaluated = "out-of-fold predictions of 5 folds";
    in.eval = &r;
    in.kfold = true;
    in.suspects = {{1, 0, 1, 0.01f, 0.95f}};
    in.next_commands = {"tvquant '<x>'"};
    const std::string html = tvh::html_report(in);
    EXPECT_EQ(html.find("<script>alert"), std::string::npos) << k;
    EXPECT_EQ(html.find("<img src=x"), std::string::npos) << k;
    EXPECT_EQ(html.find("<b>markup"), std::string::npos) << k;
    EXPECT_EQ(html.find("<i>title"), std::string::npos) << k;
    EXPECT_NE(html.find("&lt;script&gt;alert(0)&lt;/script&gt;&amp;&quot;&#39;"), std::string::npos) << k;
    // Exactly one script: the filter.
    EXPECT_EQ(tvtest::regex_captures(html, "(<script>)").size(), 1u);
    // Every in-page link has its anchor; every confusion cell with a count links.
    const std::set<std::string> ids = tvtest::regex_captures(html, "id=\"([^\"]+)\"");
    const std::set<std::string> links = tvtest::regex_captures(html, "href=\"#([^\"]+)\"");
    for (const auto& l : links) EXPECT_TRUE(ids.count(l)) << "#" << l << " has no anchor at " << k << " classes";
    for (size_t c = 0; c < k; ++c) {
      EXPECT_TRUE(links.count("class-" + std::to_string(c)));
      EXPECT_TRUE(links.count("cell-" + std::to_string(c) + "-" + std::to_string((c + 1) % k)));
    }
    // No remote URL in any src or href; the model inputs are embedded JPEGs.
    EXPECT_TRUE(tvtest::regex_captures(html, "(?:src|href)=\"(https?:[^\"]*)\"").empty());
    EXPECT_EQ(html.find("src=\"http"), std::string::npos);
    const std::set<std::string> srcs = tvtest::regex_captures(html, "src=\"([^\"]+)\"");
    ASSERT_FALSE(srcs.empty());
    for (const auto& s : srcs) EXPECT_EQ(s.rfind("data:image/jpeg;base64,", 0), 0u) << s.substr(0, 40);
    EXPECT_NE(html.find("id=\"suspects\""), std::string::npos);
    EXPECT_NE(html.find("could not be read again"), std::string::npos);
  }
}

TEST(HtmlReport, PicturesStayWithinTheBudget) {
  const tvh::Dataset ds = markup_dataset(4, 300);
  const tvh::EvalResult r = every_third_wrong(ds);
  tvh::ReportInput in;
  in.ds = &ds;
  in.evaluated = "validation images";
  in.eval = &r;
  in.image_budget = 20000;
  const std::string html = tvh::html_report(in);
  size_t data_bytes = 0;
  for (size_t at = 0; (at = html.find("src=\"data:", at)) != std::string::npos; ++at)
    data_bytes += html.find('"', at + 5) - at;
  EXPECT_LE(data_bytes, 20000u);
  EXPECT_GT(data_bytes, 10000u);
  EXPECT_NE(html.find("left out"), std::string::npos);
  EXPECT_NE(html.find("the 200 worst are shown"), std::string::npos) << "400 wrong, 200 shown";
}

TEST(Thumbnails, Base64AndShrinkAndDecodeBack) {
  EXPECT_EQ(tvh::base64({}), "");
  EXPECT_EQ(tvh::base64({'f'}), "Zg==");
  EXPECT_EQ(tvh::base64({'f', 'o'}), "Zm8=");
  EXPECT_EQ(tvh::base64({'f', 'o', 'o', 'b', 'a', 'r'}), "Zm9vYmFy");
  tvh::Image img;
  img.width = 400;
  img.height = 100;
  img.channels = 3;
  img.pixels.assign(400 * 100 * 3, 200);
  const tvh::Image s = tvh::shrink_to_fit(img, 96);
  EXPECT_EQ(s.width, 96);
  EXPECT_EQ(s.height, 24);
  EXPECT_EQ(s.pixels[0], 200);
  const tvh::Image same = tvh::shrink_to_fit(img, 400);
  EXPECT_EQ(same.width, 400);
}

TEST(HtmlReport, PageStaysUnderTheLimitWithLongNamesAndNoisyPictures) {
  tvh::Dataset ds = markup_dataset(16, 60);
  ds.height = ds.width = 128;
  ds.pixels.resize(ds.size() * ds.image_bytes());
  uint32_t x = 12345;
  for (auto& b : ds.pixels) b = (uint8_t)((x = x * 1664525u + 1013904223u) >> 24);  // noise: big JPEGs
  for (auto& p : ds.paths) p = std::string(4000, 'd') + "/" + p;
  const tvh::EvalResult r = every_third_wrong(ds);
  tvh::ReportInput in;
  in.ds = &ds;
  in.evaluated = "validation images";
  in.eval = &r;
  in.image_budget = size_t(20) << 20;  // more than the page may take: the page limit decides
  const std::string html = tvh::html_report(in);
  EXPECT_LE(html.size(), tvh::kReportMaxBytes);
  EXPECT_GT(html.size(), tvh::kReportMaxBytes / 2);
  EXPECT_NE(html.find("left out"), std::string::npos);
  EXPECT_EQ(html.find(std::string(300, 'd')), std::string::npos) << "long paths are shortened";
}

// The original thumbnail is the whole photo turned upright by its EXIF orientation (not the model's
// centre crop), at most 96 pixels a side; the model input is the decoded input at its real size.
TEST(Thumbnails, OriginalIsUprightAndWhole) {
  const std::string dir = tvtest::temp_dir("thumb-exif");
  for (const char* cls : {"a", "b"}) {
    std::filesystem::create_directories(dir + "/" + cls);
    // Shown 400x300 with the bright block top-left; stored turned for orientation 6 (portrait bytes).
    const auto shown = tvtest::quadrant_picture(400, 300, true);
    const auto stored = tvtest::stored_for_orientation(shown, 400, 300, 3, 6);
    const auto jpeg = tvtest::with_exif_orientation(tvh::encode_jpeg(stored.data(), 300, 400, 3, 95), 6);
    tvtest::write_text(dir + "/" + cls + "/p.jpg", std::string(jpeg.begin(), jpeg.end()));
  }
  tvh::DatasetOptions o;
  o.path = dir;
  o.height = o.width = 32;
  const tvh::Dataset ds = tvh::load_dataset(o);
  tvh::ThumbnailMaker thumbs(ds, 1 << 20);
  const tvh::Image t = tvh::decode_image(tvtest::decode_data_uri(thumbs.original(0)), "thumbnail");
  EXPECT_EQ(t.width, 96);
  EXPECT_EQ(t.height, 72);
  EXPECT_EQ(tvtest::bright_quadrant(t.pixels.data(), t.width, t.height, 3), 0);
  const tvh::Image in = tvh::decode_image(tvtest::decode_data_uri(thumbs.model_input(0)), "input");
  EXPECT_EQ(in.width, 32);
  EXPECT_EQ(in.height, 32);
  // Over the budget: nothing more, and it says why.
  tvh::ThumbnailMaker tight(ds, 10);
  EXPECT_EQ(tight.original(0), "");
  EXPECT_NE(tight.why().find("budget"), std::string::npos);
  EXPECT_EQ(tight.left_out(), 1u);
}
