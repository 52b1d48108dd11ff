// Calibration on every core and on a class-balanced sample: the same int8 bytes for any thread count,
// a sample that is balanced, seeded and reported.
#include <gtest/gtest.h>

#include <map>

#include "host/base/files.h"
#include "host/photos/dataset.h"
#include "host/photos/split.h"
#include "test_support.h"

namespace {}  // namespace

TEST(CalibThreads, AnyThreadCountGivesTheSameInt8Bytes) {
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  const std::string ds = tvtest::shapes_subset("ct-ds", 10);
  const std::string dir = tvtest::temp_dir("ct-out");
  ASSERT_EQ(tvtest::run_command(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + tvtest::quoted(ds) +
                                " --epochs 2 --input 24x24x3 -q " + "--no-curve --no-confusion -o " +
                                tvtest::quoted(dir + "/m.tvb")),
            0);
  for (const char* observer : {"mse", "percentile", "minmax"}) {
    std::vector<std::vector<uint8_t>> blobs;
    for (const char* threads : {"1", "2", "3"}) {
      const std::string out = dir + "/m" + threads + ".q8.tvb";
      const nlohmann::json j =
          tvtest::run_json(tvtest::quoted(tvtest::bin_path("tvquant")) + " " + tvtest::quoted(dir + "/m.tvb") +
                           " --calib " + tvtest::quoted(ds) + " --calibration " + observer + " --calib-all --threads " +
                           threads + " -q --json -o " + tvtest::quoted(out));
      ASSERT_TRUE(j.is_object());
      EXPECT_EQ(j["threads"], std::stoi(threads));
      EXPECT_GE(j["calib_seconds"].get<double>(), 0.0);
      blobs.push_back(tvh::read_file(out));
    }
    EXPECT_EQ(blobs[0], blobs[1]) << observer;
    EXPECT_EQ(blobs[0], blobs[2]) << observer;
  }
  // A sample smaller than the set: reported, and the same bytes for any thread count too.
  std::vector<std::vector<uint8_t>> blobs;
  for (const char* threads : {"1", "2"}) {
    const std::string out = dir + "/s" + threads + ".q8.tvb";
    const tvtest::CommandResult r = tvtest::run_capture(
        tvtest::quoted(tvtest::bin_path("tvquant")) + " " + tvtest::quoted(dir + "/m.tvb") + " --calib " +
        tvtest::quoted(ds) + " --calib-sample 6 --threads " + threads + " -o " + tvtest::quoted(out));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("a class-balanced sample (seed 1) of 6 of the 21 images"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("calibrated and quantized in "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("next: tvexport " + out + " -o model.h"), std::string::npos) << r.err;
    blobs.push_back(tvh::read_file(out));
  }
  EXPECT_EQ(blobs[0], blobs[1]);
  const tvtest::CommandResult both = tvtest::run_capture(
      tvtest::quoted(tvtest::bin_path("tvquant")) + " " + tvtest::quoted(dir + "/m.tvb") + " --calib " +
      tvtest::quoted(ds) + " --calib-all --calib-sample 6 -o " + tvtest::quoted(dir + "/x.q8.tvb"));
  EXPECT_EQ(both.status, 2) << both.err;
}

TEST(CalibThreads, TheSampleIsClassBalancedSeededAndAscending) {
  tvh::Dataset ds;
  ds.classes = {"a", "b", "c"};
  // 100 of a, 50 of b, 4 of c.
  for (int i = 0; i < 154; ++i) ds.labels.push_back(i < 100 ? 0 : i < 150 ? 1 : 2);
  std::vector<int> all(154);
  for (int i = 0; i < 154; ++i) all[(size_t)i] = i;
  const std::vector<int> s = tvh::class_balanced_sample(ds, all, 40, 1);
  ASSERT_EQ(s.size(), 40u);
  std::map<int, int> per;
  for (int i : s) ++per[ds.labels[(size_t)i]];
  EXPECT_EQ(per[2], 4);   // the small class gives all it has
  EXPECT_EQ(per[1], 18);  // the rest is shared
  EXPECT_EQ(per[0], 18);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(s, tvh::class_balanced_sample(ds, all, 40, 1));  // seeded
  EXPECT_NE(s, tvh::class_balanced_sample(ds, all, 40, 2));
  EXPECT_EQ(tvh::class_balanced_sample(ds, all, 154, 1), all);  // nothing to sample
}
