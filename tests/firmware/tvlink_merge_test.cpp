// Where the USB link meets the board's save and boot rules: a pushed model goes through the same
// save-target check as training, and a power cut anywhere in a push leaves a card that boots the old
// or the pushed model, never neither.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "link_support.h"
#include "sim_support.h"
#include "tv/crc32.h"
#include "tv/link/link_frame.h"

namespace fs = std::filesystem;
using linktest::PtyBoard;
using linktest::tvlink;
using simtest::has;
using simtest::quote;

TEST(TvlinkMerge, APushIsRefusedWhenAFolderStandsWhereTheModelGoes) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string old_model = linktest::model_bytes(0.01f, {"a", "b"});
  const std::string dir = tvtest::temp_dir("merge-push");
  simtest::write_text(dir + "/new.tvb", linktest::model_bytes(0.02f, {"a", "b"}));
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 2);
  fs::create_directories(card + "/header/model.tvb");  // a folder named like the model
  simtest::write_text(card + "/header/model.tvb.bak", old_model);
  const auto before = linktest::snapshot(card);
  PtyBoard board("--sd " + quote(card) + " --sd-free-bytes 50000000");
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult r = tvlink("push " + quote(board.port()) + " " + quote(dir + "/new.tvb"));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "nothing was installed: /header/model.tvb is a folder (or a device)")) << r.err;
  // the backup (the model in use) is still the file it was, the folder still where it was
  EXPECT_TRUE(linktest::snapshot(card) == before);
  EXPECT_TRUE(fs::is_directory(card + "/header/model.tvb"));
  EXPECT_TRUE(fs::is_regular_file(card + "/header/model.tvb.bak"));
  const std::string s = tvlink("status " + quote(board.port())).out;
  EXPECT_TRUE(has(s, "weights=SD (/header/model.tvb.bak, ")) << s;
}

// tvlink sent a frame while the board trains (the PC does not know): its bytes are not keys. This
// one's seq, length, payload and CRC bytes are all 'x' and 'l' (stop / select); skipped by its
// header's length, the run goes on to the end and no key is said to have been ignored.
TEST(TvlinkMerge, AFrameSentDuringTrainingIsNotReadAsKeys) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 6);
  std::string frame = "\xA5\x5A\x02xlxl\x01\x01";  // Status, seq "xlxl", 257 payload bytes
  frame += std::string(257, 'x') + "llxx";
  const simtest::SimRun r = simtest::sim("--sd " + quote(card) + simtest::labels_arg(simtest::kShapes2) + " --epochs 2",
                                         simtest::to_train(2) + frame);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "--- Training Complete ---")) << r.out;
  EXPECT_FALSE(has(r.out, "Stop requested")) << r.out;
  EXPECT_FALSE(has(r.out, "Ignored ")) << r.out;
  EXPECT_TRUE(has(r.out, "Epoch 2/2: ")) << r.out;
}

// The power goes at points of a push's install (the .tmp being written, written, the old backup
// removed, model.tvb renamed to the backup): the next boot runs the old model or the pushed one,
// whole, and the pushed one only once its verified .tmp was complete with model.tvb out of the way.
TEST(TvlinkMerge, APowerCutDuringAPushBootsTheOldOrThePushedModel) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string older = linktest::model_bytes(0.005f, {"a", "b"}),
                    old_model = linktest::model_bytes(0.01f, {"a", "b"});
  const std::string pushed = linktest::model_bytes(0.02f, {"a", "b"});
  const std::string dir = tvtest::temp_dir("merge-cut");
  simtest::write_text(dir + "/new.tvb", pushed);
  const size_t s = pushed.size();
  // card units: create the .tmp (1), its bytes (s), remove the old backup (1), rename model.tvb to
  // the backup (1), rename the .tmp (1)
  struct Cut {
    size_t at;
    const std::string* boots;
    const std::string* bak_after;
  };
  const Cut cuts[] = {{0, &old_model, &older},     {1, &old_model, &older},      {s / 2, &old_model, &older},
                      {s + 1, &old_model, &older}, {s + 2, &old_model, nullptr}, {s + 3, &pushed, &old_model}};
  for (const Cut& c : cuts) {
    SCOPED_TRACE("power cut after " + std::to_string(c.at) + " card units of a " + std::to_string(s) + "-byte push");
    const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 2);
    fs::create_directories(card + "/header");
    simtest::write_text(card + "/header/model.tvb", old_model);
    simtest::write_text(card + "/header/model.tvb.bak", older);
    {
      PtyBoard board("--sd " + quote(card) + " --sd-free-bytes 50000000 --power-cut-at " + std::to_string(c.at));
      ASSERT_FALSE(board.port().empty()) << board.err();
      // tvlink waits long for a board that went dark: stopped once the board has lost its power
      const pid_t host = fork();
      if (host == 0) {
        const std::string cmd = "exec " + quote(tvtest::bin_path("tvlink")) + " push " + quote(board.port()) + " " +
                                quote(dir + "/new.tvb") + " >/dev/null 2>&1";
        execl("/bin/sh", "sh", "-c", cmd.c_str(), (char*)nullptr);
        _exit(127);
      }
      for (int i = 0; i < 6000 && !has(board.err(), "tvsim: power cut after "); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      EXPECT_TRUE(has(board.err(), "tvsim: power cut after " + std::to_string(c.at) + " card units")) << board.err();
      kill(host, SIGKILL);
      waitpid(host, nullptr, 0);
    }
    const simtest::SimRun boot = simtest::sim("--sd " + quote(card), "");
    EXPECT_EQ(boot.status, 0) << boot.err;
    EXPECT_EQ(simtest::boot_crc(boot.out), simtest::hex(tv::crc32(0, c.boots->data(), c.boots->size()))) << boot.out;
    EXPECT_TRUE(simtest::read_text(card + "/header/model.tvb") == *c.boots);
    if (c.bak_after)
      EXPECT_TRUE(simtest::read_text(card + "/header/model.tvb.bak") == *c.bak_after);
    else
      EXPECT_FALSE(fs::exists(card + "/header/model.tvb.bak"));
    EXPECT_FALSE(fs::exists(card + "/header/model.tvb.tmp"));
  }
}

// Taps made while a USB link session holds the board are dropped with it, as keys and taps made
// during training are: 3 taps during a session do not select the menu's item (Capture) after it.
TEST(TvlinkMerge, ATouchGestureMadeDuringALinkSessionIsDropped) {
  TV_REQUIRE_BINARY("tvsim");
  uint8_t hello[tv::link::kMaxFrameBytes];
  const size_t n = tv::link::encode_frame(tv::link::kHello, 1, nullptr, 0, hello, sizeof hello);
  ASSERT_GT(n, 0u);
  // the taps end (0.8 s) while the session waits for the silent PC (4 s of the simulator's virtual
  // time); the input is held for 6 s, then `?` asks for the help
  const std::string input = std::string((const char*)hello, n) + "\n~tap 3\n~wait 6000\n?\n";
  const simtest::SimRun r = simtest::sim("--sd " + quote(tvtest::temp_dir("card")) + " --labels cat,dog", input);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(has(r.out, "USB link: the PC fell silent; back to the menu")) << r.out;
  const std::string after = r.out.substr(r.out.find("USB link: the PC fell silent"));
  EXPECT_FALSE(has(after, "Touch: 3 taps (select)")) << r.out;
  EXPECT_FALSE(has(after, ">>> Collection mode")) << r.out;
  EXPECT_TRUE(has(after, "Ignored a touch gesture made during the USB link session")) << r.out;
}
