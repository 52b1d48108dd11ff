// tvsim's script directives (firmware/hal_sim/script.h, fuzzed by fuzz/fuzz_tvsim_script.cpp): a
// directive beyond its limit is refused with a sentence and ignored, never expanded ("~tap 2000000000"
// queued two billion touches; a number beyond a long overflowed sscanf).
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

TEST(TvsimScript, ADirectiveBeyondItsLimitIsRefusedAndIgnored) {
  const std::string bin = tvtest::bin_path("tvsim");
  TV_REQUIRE_BINARY("tvsim");
  const std::string dir = tvtest::temp_dir("tvsim-script");
  std::ofstream(dir + "/in.txt") << "~tap 2000000000\n~wait 99999999999999999999\n~touch 5\n~jump 3\n~tap 2\n?\n";
  const tvtest::CommandResult r =
      tvtest::run_capture("'" + bin + "' --labels a,b --sd '" + dir + "' < '" + dir + "/in.txt'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.err.find("script line '~tap 2000000000' ignored: ~tap: the tap count must be a whole number from 1 to 100"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("'~wait 99999999999999999999' ignored"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'~touch 5' ignored: ~touch needs the milliseconds"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown directive '~jump'"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("Touch: 2 taps"), std::string::npos) << r.out;  // the valid directive still plays
  EXPECT_NE(r.out.find("Commands: t = next"), std::string::npos) << r.out;
}
