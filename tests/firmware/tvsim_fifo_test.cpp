// tvsim and files that are not files, and a full disk on its serial output (issue 20): a FIFO among the
// camera frames or as the card's model is said and passed over, never waited on; stdout that refuses
// the serial output is exit 1 with a sentence. Runs the real tvsim under `timeout`, so a hang fails.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "sim_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using simtest::has;

namespace {

tvtest::CommandResult run_sim(const std::string& args, const std::string& input, const std::string& redirect = "") {
  const std::string dir = tvtest::temp_dir("simfifo-in");
  tvtest::write_text(dir + "/input.txt", input);
  return tvtest::run_capture("timeout 60 " + simtest::quote(tvtest::bin_path("tvsim")) + " " + args + " < " +
                             simtest::quote(dir + "/input.txt") + redirect);
}
constexpr int kTimedOut = 124;

}  // namespace

TEST(TvsimFifo, AFifoAmongTheCameraFramesIsPassedOverNotWaitedOn) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = tvtest::temp_dir("simfifo-card");
  const std::string cam = tvtest::temp_dir("simfifo-cam");
  const auto shapes = simtest::sorted_jpegs(simtest::shapes_dir() + "/1circle");
  fs::copy_file(simtest::shapes_dir() + "/1circle/" + shapes[0], cam + "/a.jpg");
  ASSERT_EQ(mkfifo((cam + "/b.jpg").c_str(), 0644), 0);
  fs::copy_file(simtest::shapes_dir() + "/1circle/" + shapes[1], cam + "/c.jpg");
  // Into the capture mode of the first class, two captures, then back to the menu.
  const tvtest::CommandResult r = run_sim("--sd " + card + " --camera " + cam + simtest::labels_arg(simtest::kShapes2),
                                          "l\nt\n~tap 1\nt\n~tap 4\n");
  ASSERT_NE(r.status, kTimedOut) << "tvsim hung on a FIFO camera frame";
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, cam + "/b.jpg': it is a FIFO (named pipe), not a regular file")) << r.err;
  EXPECT_EQ(tvtest::read_text(card + "/images/0blank/img_0.jpg"), tvtest::read_text(cam + "/a.jpg"));
  EXPECT_EQ(tvtest::read_text(card + "/images/0blank/img_1.jpg"), tvtest::read_text(cam + "/c.jpg"))
      << "the frame after the FIFO was not taken:\n"
      << r.out;
}

TEST(TvsimFifo, AFifoAsTheCardsModelIsRefusedNotWaitedOn) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = tvtest::temp_dir("simfifo-model");
  fs::create_directories(card + "/header");
  ASSERT_EQ(mkfifo((card + "/header/model.tvb").c_str(), 0644), 0);
  const tvtest::CommandResult r = run_sim("--sd " + card + simtest::labels_arg(simtest::kShapes2), "");
  ASSERT_NE(r.status, kTimedOut) << "tvsim hung on a FIFO model";
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused")) << r.out;
}

TEST(TvsimFifo, AFifoAmongTheCardsPhotosIsPassedOverWhileTraining) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 4);
  ASSERT_EQ(mkfifo((card + "/images/0blank/img_99.jpg").c_str(), 0644), 0);
  const tvtest::CommandResult r = run_sim(
      "--sd " + card + simtest::labels_arg(simtest::kShapes2) + " --preset webmcu --epochs 1", simtest::to_train(2));
  ASSERT_NE(r.status, kTimedOut) << "tvsim hung on a FIFO photo";
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Weights saved to SD")) << "trained on the other photos and saved:\n" << r.out;
}

TEST(TvsimFifo, AFullDiskOnTheSerialOutputIsExitOneWithASentence) {
  TV_REQUIRE_BINARY("tvsim");
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full is not available";
  const std::string card = tvtest::temp_dir("simfifo-full");
  const std::string args = "--sd " + card + simtest::labels_arg(simtest::kShapes2);
  ASSERT_EQ(run_sim(args, "?\n").status, 0);  // control
  const tvtest::CommandResult r = run_sim(args, "?\n", " > /dev/full");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has(r.err, "tvsim: cannot write the serial output to standard output: No space left on device."))
      << r.err;
}
