// tvtrain's messages (host/train/config.cpp, host/photos/split.cpp, the confusion table): a config number overflow and an
// unknown key named sensibly, small classes, tables with non-ASCII class names. Through the real tvtrain binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "host/base/text_width.h"
#include "test_support.h"

namespace {

using tvtest::contains;
using Result = tvtest::CommandResult;
Result run(const std::string& cmd) {
  return tvtest::run_capture(cmd);
}

}  // namespace

// ---- config messages

TEST(ConfigMessages, ANumberOverflowNamesTheFileAndTheKey) {
  const std::string dir = tvtest::temp_dir("cfg-overflow");
  const std::string tvtrain = tvtest::quoted(tvtest::bin_path("tvtrain"));
  const std::string shapes = tvtest::quoted(tvtest::source_path("datasets/shapes"));
  struct Case {
    std::string json, says;
  } cases[] = {
      {"{\"training\": {\"epochs\": 1e999}}", "training.epochs is 1e999, a number too large"},
      {"{\"model\": {\"layers\": [{\"type\": \"relu\"}, {\"type\": \"dense\", \"units\": -1e400}]}}",
       "model.layers[1].units is -1e400"},
      {"{\"a\": 1}", "\"a\" is not a known top-level key (known: preset, model, training, split)"},
      {"{\"training\": {\"augment\": {\"flap\": true}}}",
       "training.augment.flap is not a known key (known in training.augment: flip, shift, brightness)"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string file = dir + "/c" + std::to_string(i++) + ".json";
    std::ofstream(file) << c.json;
    const Result r =
        run(tvtrain + " " + shapes + " --config " + tvtest::quoted(file) + " -o " + tvtest::quoted(dir + "/m.tvb"));
    EXPECT_EQ(r.status, 1) << c.json;
    EXPECT_TRUE(contains(r.err, file + ": " + c.says)) << c.json << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "json.exception")) << r.err;
    EXPECT_FALSE(contains(r.err, "the config.")) << r.err;
  }
}

// ---- tvtrain's messages about small classes and tables with non-ASCII class names

namespace {

// `per_class` images of each listed datasets/shapes class, copied under the given names.
std::string shapes_copy(const std::string& tag, const std::vector<std::pair<std::string, int>>& classes) {
  namespace fs = std::filesystem;
  const std::string dir = tvtest::temp_dir(tag);
  const char* sources[] = {"0blank", "1circle", "2cross"};
  int s = 0;
  for (const auto& c : classes) {
    fs::create_directories(dir + "/" + c.first);
    std::vector<std::string> files;
    for (auto& e : fs::directory_iterator(tvtest::source_path(std::string("datasets/shapes/") + sources[s++ % 3])))
      files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (int i = 0; i < c.second; ++i)
      fs::copy_file(files[(size_t)i], dir + "/" + c.first + "/" + fs::path(files[(size_t)i]).filename().string());
  }
  return dir;
}

}  // namespace

TEST(SmallClassMessages, OneImagePerClassSaysThereIsNoValidationNotZeroOfZero) {
  const std::string ds = shapes_copy("one-per-class", {{"a", 1}, {"b", 1}});
  const std::string out = tvtest::temp_dir("one-per-class-out");
  const Result r = run(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + tvtest::quoted(ds) +
                       " --preset webmcu --epochs 1 --no-curve -o " + tvtest::quoted(out + "/m.tvb") + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "(0/0)")) << r.err;
  EXPECT_TRUE(contains(r.err, "no validation accuracy: no image was kept for validation")) << r.err;
  EXPECT_TRUE(contains(r.err, "warning: class 'a' has 1 image, not more than --val-last 3: it only trains")) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["val_accuracy"].is_null()) << r.out;
}

TEST(SmallClassMessages, AClassSmallerThanValLastIsWarnedAbout) {
  const std::string ds = shapes_copy("small-class", {{"big", 8}, {"small", 2}});
  const std::string out = tvtest::temp_dir("small-class-out");
  const Result r = run(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + tvtest::quoted(ds) +
                       " --preset webmcu --epochs 1 --no-curve -o " + tvtest::quoted(out + "/m.tvb"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(
      contains(r.err, "warning: class 'small' has 2 images, not more than --val-last 3: 1 validates instead of 3"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "class 'big'")) << r.err;
}

TEST(SmallClassMessages, TheConfusionMatrixAlignsNonAsciiClassNamesAndNeverCutsACharacter) {
  // Greek (2 bytes a letter), CJK (3 bytes, 2 columns), an e with a combining accent.
  const std::vector<std::pair<std::string, int>> classes = {
      {"\xce\xba\xcf\x8d\xce\xba\xce\xbb\xce\xbf\xcf\x82\xce\xb1\xce\xb2", 4},  // κύκλοςαβ: 8 letters, 16 bytes
      {"\xe5\x9c\x86\xe5\xbd\xa2\xe5\x8d\x81\xe5\xad\x97\xe6\x9e\xb6", 4},      // 圆形十字架: 10 columns
      {"cafe\xcc\x81-long-name", 4}};
  const std::string ds = shapes_copy("utf8-classes", classes);
  const std::string out = tvtest::temp_dir("utf8-classes-out");
  const Result r = run(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + tvtest::quoted(ds) +
                       " --preset webmcu --epochs 1 --no-curve --val-last 2 -o " + tvtest::quoted(out + "/m.tvb"));
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t at = r.err.find("confusion matrix");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::vector<std::string> lines;
  size_t p = r.err.find('\n', at) + 1;
  for (int i = 0; i < 4; ++i) {
    const size_t nl = r.err.find('\n', p);
    lines.push_back(r.err.substr(p, nl - p));
    p = nl + 1;
  }
  // Every row is valid UTF-8 (no character cut) and the "accuracy" column starts at the same column.
  auto columns_to = [](const std::string& line, const std::string& what) {
    const std::string head = line.substr(0, line.find(what));
    return tvh::text_width(head);
  };
  const size_t header_col = columns_to(lines[0], "accuracy");
  for (int i = 1; i < 4; ++i) {
    const size_t paren = lines[(size_t)i].find("  (");
    ASSERT_NE(paren, std::string::npos) << lines[(size_t)i];
    // The header's "accuracy" starts 3 columns after the counts; a row's " xx.x %" ends 10 after them.
    EXPECT_EQ(tvh::text_width(lines[(size_t)i].substr(0, paren)), header_col + 7) << lines[(size_t)i];
  }
  for (const std::string& l : lines) {
    for (size_t i = 0; i < l.size(); ++i) {
      const unsigned char c = (unsigned char)l[i];
      const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
      for (size_t k = 1; k < n; ++k) ASSERT_EQ((unsigned char)l[i + k] >> 6, 2) << "character cut in: " << l;
      i += n - 1;
    }
  }
  EXPECT_TRUE(contains(lines[0], "\xe5\x9c\x86\xe5\xbd\xa2\xe5\x8d\x81~")) << lines[0];  // 3 wide characters + "~"
  EXPECT_TRUE(contains(lines[0], "\xce\xba\xcf\x8d\xce\xba\xce\xbb\xce\xbf\xcf\x82\xce\xb1\xce\xb2")) << lines[0];
  EXPECT_EQ(tvh::text_width("cafe\xcc\x81"), 4u);
  EXPECT_EQ(tvh::clip_to_width("cafe\xcc\x81-long", 5), "cafe\xcc\x81~");
}
