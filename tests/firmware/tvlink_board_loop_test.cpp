// The README's "Board" loop on the simulated board, each step one command: capture on the board ->
// tvlink pull -> tvtrain -> tvquant -> tvlink push -> the board infers with the new model.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "link_support.h"
#include "sim_support.h"

namespace fs = std::filesystem;
using linktest::PtyBoard;
using linktest::tvlink;
using simtest::has;
using simtest::quote;

TEST(TvlinkBoardLoop, CapturePullTrainQuantizePushInfer) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  const size_t kCaptured = 12;  // per class
  // the camera: 12 frames of each class to capture (c0_*, c1_*), then the rest to infer (d0_*, d1_*);
  // `heldout` holds the inferred frames as class folders, for tvtrain --eval
  const std::string cam = tvtest::temp_dir("loopcam"), heldout = tvtest::temp_dir("heldout");
  std::vector<std::string> infer_truth;
  for (size_t c = 0; c < simtest::kShapes2.size(); ++c) {
    const std::string cls = simtest::kShapes2[c], from = simtest::shapes_dir() + "/" + cls;
    const std::vector<std::string> files = simtest::sorted_jpegs(from);
    fs::create_directories(heldout + "/" + cls);
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string name = (i < kCaptured ? "c" : "d") + std::to_string(c) + "_" + files[i];
      fs::copy_file(from + "/" + files[i], cam + "/" + name);
      if (i >= kCaptured) fs::copy_file(from + "/" + files[i], heldout + "/" + cls + "/" + files[i]);
    }
  }
  const std::string card = tvtest::temp_dir("loopcard");
  PtyBoard board("--sd " + quote(card) + " --camera " + quote(cam) + " --labels 0blank,1circle");
  ASSERT_FALSE(board.port().empty()) << board.err();

  // 1. capture on the board: 12 photos of each class (select, tap x12, back; next; the same)
  const std::string taps(kCaptured, 't');
  const std::string captured =
      linktest::console(board.port(), "l" + taps + "l" + "t" + "l" + taps + "l", "Leaving capture mode", 2);
  ASSERT_TRUE(has(captured, "Saved: /images/1circle/img_11.jpg")) << captured;

  // 2. tvlink pull
  const std::string work = tvtest::temp_dir("loop"), photos = work + "/photos";
  const tvtest::CommandResult pulled = tvlink("pull " + quote(board.port()) + " " + quote(photos));
  ASSERT_EQ(pulled.status, 0) << pulled.err;
  EXPECT_EQ(linktest::snapshot(photos), linktest::snapshot(card + "/images"));
  EXPECT_EQ(linktest::snapshot(photos).size(), 2 * kCaptured);

  // 3-4. tvtrain, tvquant
  std::string out, err;
  ASSERT_EQ(
      tvtest::run_command(
          quote(tvtest::bin_path("tvtrain")) + " " + quote(photos) + " -o " + quote(work + "/model.tvb"), &out, &err),
      0)
      << err;
  ASSERT_EQ(tvtest::run_command(quote(tvtest::bin_path("tvquant")) + " " + quote(work + "/model.tvb") + " --calib " +
                                    quote(photos) + " -o " + quote(work + "/model.q8.tvb"),
                                &out, &err),
            0)
      << err;

  // 5. tvlink push
  const tvtest::CommandResult pushed = tvlink("push " + quote(board.port()) + " " + quote(work + "/model.q8.tvb"));
  ASSERT_EQ(pushed.status, 0) << pushed.err;
  EXPECT_EQ(tvtest::read_text(card + "/header/model.tvb"), tvtest::read_text(work + "/model.q8.tvb"));

  // 6. the board infers the frames it has not seen, as tvtrain --eval does with the same model
  // (the menu is on 1circle: two steps to Infer)
  const std::string inferred = linktest::console(board.port(), "ttl", "Camera: no frame");
  EXPECT_TRUE(has(inferred, "Weights: SD (/header/model.tvb, ")) << inferred;
  const std::vector<std::string> preds = simtest::predictions(inferred);
  const std::vector<std::string> frames = simtest::sorted_jpegs(cam);
  ASSERT_EQ(preds.size(), frames.size() - 2 * kCaptured) << inferred;
  std::vector<std::vector<int>> cm(2, std::vector<int>(2, 0));
  for (size_t i = 0; i < preds.size(); ++i) {
    const int truth = frames[2 * kCaptured + i][1] - '0';
    cm[truth][preds[i] == "1circle" ? 1 : 0]++;
  }
  EXPECT_EQ(cm, simtest::tvtrain_eval_confusion(heldout, work + "/model.q8.tvb", ""));
}
