// Usage errors through the real binaries: every number an option takes is read strictly (NaN, wrap-around,
// hex and exponents in counts are refused), every choice suggests the nearest, and each is exit status 2
// with one sentence. Labels a model carries are printed escaped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "host/base/error.h"
#include "host/base/numbers.h"
#include "host/base/text_width.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "test_support.h"
#include "tv/int8/q8_model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;

namespace {

using tvtest::contains;

// A he-initialized webmcu model with the given labels.
std::string make_model(const std::string& path, const std::vector<std::string>& labels) {
  tv::ModelDesc d;
  tv::webmcu_model((int)labels.size(), &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count);
  tv::he_init(*plan, p.data(), 3);
  const std::vector<uint8_t> bytes = tvh::encode_float_blob(*plan, p.data(), labels, "tool=test\npreset=webmcu\n");
  std::ofstream(path, std::ios::binary).write((const char*)bytes.data(), (std::streamsize)bytes.size());
  return path;
}

struct Case {
  const char* tool;  // binary
  std::string args;  // after the binary
  const char* says;  // a part of the one sentence on stderr
};

}  // namespace

TEST(StrictNumbers, WholeNumbersAreDigitsOnlyAndInRange) {
  EXPECT_EQ(tvh::whole_number_problem("0", 0, 5), "");
  EXPECT_EQ(tvh::whole_number_problem("18446744073709551615", 0, UINT64_MAX), "");
  for (const char* bad : {"", "-1", "+1", "1e3", "0x10", " 5", "5 ", "1.0", "nan", "18446744073709551616",
                          "99999999999999999999999", "4294967297"})
    EXPECT_NE(tvh::whole_number_problem(bad, 0, 4294967295u), "") << bad;
  EXPECT_EQ(tvh::whole_number_problem("6", 1, 5), "6 is out of range: give a whole number from 1 to 5.");
  EXPECT_EQ(tvh::parse_whole_number("--x", "42", 0, 100), 42u);
  EXPECT_THROW(tvh::parse_whole_number("--x", "-1", 0, 100), tvh::UsageError);
}

TEST(StrictNumbers, RealNumbersAreFiniteAndInRange) {
  for (const char* ok : {"0.5", "1e-3", "3E-4", ".5", "10", "+0.1"})
    EXPECT_EQ(tvh::real_number_problem(ok, 0, 10), "") << ok;
  for (const char* bad :
       {"nan", "NaN", "inf", "-inf", "infinity", "0x1p-3", "1e400", "-0.5", "10.5", "", "1,5", "1e", "e5", "0.5x"})
    EXPECT_NE(tvh::real_number_problem(bad, 0, 10), "") << bad;
  EXPECT_EQ(tvh::real_number_problem("nan", 1e-9, 10), "'nan' is not a number from 1e-09 to 10.");
  EXPECT_DOUBLE_EQ(tvh::parse_real_number("--x", "0.25", 0, 1), 0.25);
}

TEST(StrictNumbers, ChoicesSuggestTheNearest) {
  EXPECT_EQ(tvh::choice_problem("webmcu", {"tinyvision", "webmcu"}), "");
  EXPECT_EQ(tvh::choice_problem("tinyvison", {"tinyvision", "webmcu"}),
            "'tinyvison' is not one of tinyvision, webmcu; did you mean tinyvision?");
  EXPECT_EQ(tvh::choice_problem("zzz", {"tinyvision", "webmcu"}), "'zzz' is not one of tinyvision, webmcu.");
}

TEST(StrictUsage, EveryBadValueIsAUsageErrorWithOneSentence) {
  for (const char* t : {"tvtrain", "tvquant", "tvexport", "tvsim"}) TV_REQUIRE_BINARY(t);
  const std::string dir = tvtest::temp_dir("strict-usage");
  const std::string ds = tvtest::source_path("datasets/shapes");
  const std::string model = make_model(dir + "/m.tvb", {"0blank", "1circle", "2cross"});
  const std::string train = tvtest::quoted(ds) + " -o " + tvtest::quoted(dir + "/out.tvb") + " ";
  const std::string quant =
      tvtest::quoted(model) + " --calib " + tvtest::quoted(ds) + " -o " + tvtest::quoted(dir + "/out.q8.tvb") + " ";
  const std::string prune =
      "prune " + tvtest::quoted(model) + " " + tvtest::quoted(ds) + " -o " + tvtest::quoted(dir + "/out.tvb") + " ";
  const std::vector<Case> cases = {
      {"tvtrain", train + "--lr nan", "--lr: 'nan' is not a number from 1e-09 to 10."},
      {"tvtrain", train + "--lr inf", "--lr: 'inf' is not a number"},
      {"tvtrain", train + "--lr 1e400", "--lr: 1e400 is out of range"},
      {"tvtrain", train + "--split fraction --val-fraction nan",
       "--val-fraction: 'nan' is not a number from 0 to 0.95."},
      {"tvtrain", train + "--seed -1", "--seed: '-1' is not a whole number from 0 to 18446744073709551615."},
      {"tvtrain", train + "--seed 18446744073709551616", "--seed: 18446744073709551616 is too large"},
      {"tvtrain", train + "--seed 1e23", "--seed: '1e23' is not a whole number"},
      {"tvtrain", train + "--epochs 4294967297", "--epochs: 4294967297 is out of range"},
      {"tvtrain", train + "--epochs 1e3", "--epochs: '1e3' is not a whole number"},
      {"tvtrain", train + "--val-last 4294967296", "--val-last: 4294967296 is out of range"},
      {"tvtrain", train + "--threads 0x10", "--threads: '0x10' is not a whole number"},
      {"tvtrain", train + "--batch -3", "--batch: '-3' is not a whole number"},
      {"tvtrain", "x --kfold 1", "--kfold: 1 is out of range: give a whole number from 2 to 1000."},
      {"tvtrain", train + "--input 0x0x3", "--input 0x0x3: the height 0 is out of range"},
      {"tvtrain", train + "--input 17x16x2", "--input 17x16x2: the channels must be 1 (gray) or 3 (colour), not 2."},
      {"tvtrain", train + "--input 64x99999x3", "--input 64x99999x3: the width 99999 is out of range"},
      {"tvtrain", train + "--input 28x28", "is not of the form HxWxC"},
      {"tvtrain", train + "--preset tinyvison",
       "'tinyvison' is not one of tinyvision, webmcu, detect; did you mean tinyvision?"},
      {"tvtrain", train + "--split fractoin", "did you mean fraction?"},
      {"tvtrain", train + "--augment none,flip", "none turns augmentation off and cannot be combined"},
      {"tvtrain", train + "--augment flip,none", "none turns augmentation off and cannot be combined"},
      {"tvtrain", train + "-0", "unknown option -0."},
      {"tvtrain", "classify " + tvtest::quoted(model) + " x.jpg --preset webmc", "did you mean webmcu?"},
      {"tvquant", quant + "--percentile nan", "--percentile: 'nan' is not a number from 1e-06 to 100."},
      {"tvquant", quant + "--percentile 99 --calibration mse", "--percentile sets --calibration percentile"},
      {"tvquant", quant + "--calibration mes", "did you mean mse?"},
      {"tvquant", quant + "--val-last -1", "--val-last: '-1' is not a whole number"},
      {"tvquant", prune + "--ratio nan", "--ratio: 'nan' is not a number from 0 to 0.95."},
      {"tvquant", prune + "--seed -1", "--seed: '-1' is not a whole number"},
      {"tvquant", prune + "--preset tinyvison", "did you mean tinyvision?"},
      {"tvexport", "info " + tvtest::quoted(model) + " --budget 512Q", "--budget 512Q: not a byte count"},
      {"tvexport", tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/m.h") + " --format heder",
       "did you mean header?"},
      {"tvexport",
       tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/m.h") + " --test-images " + tvtest::quoted(ds),
       "--test-images only applies to an .espdl export"},
      {"tvexport", tvtest::quoted(model) + " -o - --format espdl",
       "an .espdl is binary; give -o FILE.espdl, not stdout."},
      {"tvexport", tvtest::quoted(model) + " -o - --format webmcu-bin",
       "--format webmcu-bin needs an output file, not stdout."},
      {"tvsim", "--epochs 4294967297", "--epochs: 4294967297 is out of range: give a whole number from 1 to 100000."},
      {"tvsim", "--val-last 4294967296", "--val-last: 4294967296 is out of range"},
      {"tvsim", "--seed -1", "--seed: '-1' is not a whole number"},
      {"tvsim", "--cores 0", "--cores: 0 is out of range"},
      {"tvsim", "--psram-bytes 1e9", "--psram-bytes: '1e9' is not a whole number"},
  };
  for (const Case& c : cases) {
    const tvtest::CommandResult r = tvtest::run_capture(tvtest::tool_command(c.tool) + " " + c.args + " </dev/null");
    EXPECT_EQ(r.status, 2) << c.tool << " " << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.says)) << c.tool << " " << c.args << "\n" << r.err;
    // One sentence, not CLI11's own first line as well.
    EXPECT_FALSE(contains(r.err, "The following argument")) << r.err;
    EXPECT_FALSE(contains(r.err, "Could not convert")) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/out.tvb"));
  EXPECT_FALSE(fs::exists(dir + "/out.q8.tvb"));
  // The strict reader still takes what people write.
  const tvtest::CommandResult ok = tvtest::run_capture(tvtest::tool_command("tvtrain") + " " + train +
                                                       "--lr 3e-4 --seed 18446744073709551615 --epochs 1 --input "
                                                       "16x16x1 -q --no-curve --no-confusion");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST(StrictUsage, ANonOptionMistakeGetsNoCoinTossSuggestion) {
  TV_REQUIRE_BINARY("tvtrain");
  tvtest::CommandResult r = tvtest::run_capture(tvtest::tool_command("tvtrain") + " x -0");
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(contains(r.err, "did you mean")) << r.err;  // "-0" is one edit from -h, -o and -q alike
  r = tvtest::run_capture(tvtest::tool_command("tvtrain") + " x --epcohs 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "tvtrain: unknown option --epcohs; did you mean --epochs?")) << r.err;
}

TEST(StrictUsage, LabelsArePrintedEscapedByClassifyAndInfo) {
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvexport");
  const std::string dir = tvtest::temp_dir("strict-labels");
  const std::string model = make_model(dir + "/m.tvb", {"red\x1b[31mX", "two\nlines",
                                                        "c\xc2\x9b"
                                                        "d"});
  const std::string image = tvtest::source_path("datasets/shapes/1circle/img_000.jpg");
  ASSERT_TRUE(fs::exists(image));
  for (const std::string& cmd :
       {tvtest::tool_command("tvtrain") + " classify " + tvtest::quoted(model) + " " + tvtest::quoted(image),
        tvtest::tool_command("tvexport") + " info " + tvtest::quoted(model)}) {
    const tvtest::CommandResult r = tvtest::run_capture(cmd);
    ASSERT_EQ(r.status, 0) << cmd << "\n" << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << r.out;
    EXPECT_TRUE(contains(r.out, "red\\x1b[31mX")) << r.out;
    EXPECT_TRUE(contains(r.out, "two\\x0alines")) << r.out;
    EXPECT_TRUE(contains(r.out, "c\\u009bd")) << r.out;
  }
  // tvtrain's tables of class names (--eval: the confusion matrix, per-class figures) too.
  const std::string ds = tvtest::temp_dir("strict-labels-ds");
  const std::string shapes = tvtest::source_path("datasets/shapes");
  const std::vector<std::string> labels = {
      "c\xc2\x9b"
      "d",
      "red\x1b[31mX", "two\nlines"};  // sorted, as folders are
  const std::string sorted_model = make_model(dir + "/sorted.tvb", labels);
  const char* const sources[] = {"0blank", "1circle", "2cross"};
  for (size_t c = 0; c < 3; ++c) {
    fs::create_directories(ds + "/" + labels[c]);
    for (const char* f : {"img_000.jpg", "img_001.jpg"})
      fs::copy_file(shapes + "/" + sources[c] + "/" + f, ds + "/" + labels[c] + "/" + f);
  }
  const tvtest::CommandResult e = tvtest::run_capture(tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) +
                                                      " --eval --init " + tvtest::quoted(sorted_model));
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(e.err.find('\x1b'), std::string::npos) << e.err;
  EXPECT_TRUE(contains(e.err, "two\\x0alines")) << e.err;
  // JSON keeps the labels as they are (JSON escapes them itself).
  const tvtest::CommandResult j = tvtest::run_capture(tvtest::tool_command("tvtrain") + " classify --json " +
                                                      tvtest::quoted(model) + " " + tvtest::quoted(image));
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json a = nlohmann::json::parse(j.out);
  EXPECT_TRUE(a[0]["probabilities"].contains("two\nlines"));
}

TEST(StrictUsage, WarningsPrintFolderNamesVisibly) {
  // A class folder whose name holds a terminal escape, named in tvtrain's warnings (a photo beside the
  // class folders, a class too small for --val-last): written visibly like every label, never obeyed.
  TV_REQUIRE_BINARY("tvtrain");
  const std::string ds = tvtest::shapes_subset("strict-warn-ds", 3);
  fs::rename(ds + "/1circle", ds + "/1circle\x1b[7m");
  fs::copy_file(ds + "/0blank/img_000.jpg", ds + "/loose.jpg");
  const std::string dir = tvtest::temp_dir("strict-warn");
  const tvtest::CommandResult r = tvtest::run_capture(tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) +
                                                      " --epochs 1 --no-report -o " + tvtest::quoted(dir + "/m.tvb"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "beside the class folders")) << r.err;
  EXPECT_TRUE(contains(r.err, "'1circle\\x1b[7m'")) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
}

TEST(StrictUsage, PruneTableAndTvquantAgreeOnInt8WeightBytes) {
  TV_REQUIRE_BINARY("tvquant");
  const std::string dir = tvtest::temp_dir("strict-bytes");
  const std::string ds = tvtest::shapes_subset("strict-bytes-ds", 4);
  const std::string model = make_model(dir + "/m.tvb", {"0blank", "1circle", "2cross"});
  const nlohmann::json p =
      tvtest::run_json(tvtest::tool_command("tvquant") + " prune " + tvtest::quoted(model) + " " + tvtest::quoted(ds) +
                       " --ratio 0.25 " + "--epochs 0 --preset webmcu -q --json -o " + tvtest::quoted(dir + "/p.tvb"));
  const nlohmann::json t =
      tvtest::run_json(tvtest::tool_command("tvquant") + " " + tvtest::quoted(model) + " --calib " +
                       tvtest::quoted(ds) + " --val-last 1 -q --json -o " + tvtest::quoted(dir + "/m.q8.tvb"));
  ASSERT_TRUE(p.is_object() && t.is_object());
  // The same model: the same figure (each int8 array padded to 16 bytes as the header lays it out).
  EXPECT_EQ(p["rows"][0]["int8_bytes"], t["int8_weight_bytes"]);
  const tvh::LoadedModel pruned = tvh::load_model(dir + "/p.tvb");
  EXPECT_EQ(p["rows"][1]["int8_bytes"], tv::q8_memory(*pruned.plan).weight_bytes);
}

TEST(StrictUsage, TablesSizeTheirColumnsFromTheirContent) {
  const std::string t = tvh::format_table({{"name", "n"}, {"a-much-longer-cell", "1,234,567,890"}, {"b", "7"}}, "l");
  EXPECT_EQ(t,
            "name                           n\n"
            "a-much-longer-cell 1,234,567,890\n"
            "b                              7\n");
}

TEST(StrictUsage, AModelFileBesideTheClassFoldersIsNotToldToMoveIntoAClass) {
  const std::string root = tvtest::temp_dir("strict-header");
  const std::string ds = tvtest::source_path("datasets/shapes");
  for (const char* c : {"0blank", "1circle"}) {
    fs::create_directories(root + "/images/" + c);
    for (int i = 0; i < 2; ++i) {
      const std::string name = "img_00" + std::to_string(i) + ".jpg";
      fs::copy_file(ds + "/" + c + "/" + name, root + "/images/" + c + "/" + name);
    }
  }
  fs::create_directories(root + "/images/header");
  tvtest::write_text(root + "/images/header/myWeights.bin", "weights");
  fs::copy_file(ds + "/0blank/img_002.jpg", root + "/images/stray.jpg");
  tvh::DatasetOptions o;
  o.path = root + "/images";
  o.height = o.width = 16;
  o.channels = 3;
  const tvh::DatasetListing l = tvh::list_dataset(o);
  ASSERT_EQ(l.skipped.size(), 2u);
  for (const tvh::SkippedFile& s : l.skipped) {
    if (contains(s.path, "myWeights.bin")) {
      EXPECT_FALSE(contains(s.message, "move it")) << s.message;
      EXPECT_TRUE(contains(s.message, "left out")) << s.message;
    } else {
      EXPECT_TRUE(contains(s.message, "move it into the sub-folder of its class")) << s.message;  // a photo: yes
    }
  }
}
