// tvlink against the simulated board (tvsim --pty), as real child processes: status, pulling the
// card's photos byte for byte and incrementally, the board's refusals of paths outside /images.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "host/link/link.h"
#include "link_support.h"
#include "sim_support.h"
#include "tv/link/link_frame.h"

namespace fs = std::filesystem;
using linktest::PtyBoard;
using linktest::tvlink;
using simtest::has;
using simtest::quote;

TEST(Tvlink, StatusNamesFirmwareModelPhotosAndFreeSpace) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 5);
  PtyBoard board("--sd " + quote(card) + " --sd-free-bytes 123456789");
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult r = tvlink("status " + quote(board.port()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "firmware=" TV_VERSION "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "model=64x64x3 input, 2 classes, ")) << r.out;
  EXPECT_TRUE(has(r.out, "network=tinyvision\nengine=float\nweights=backbone (built-in tinyvision-64x64x3")) << r.out;
  EXPECT_TRUE(has(r.out, "class=0blank 5\nclass=1circle 5\n")) << r.out;
  EXPECT_TRUE(has(r.out, "card_free=123456789\n")) << r.out;
  EXPECT_TRUE(has(r.out, "psram_free=")) << r.out;
  // the board is back in its menu: a second connection works the same
  const tvtest::CommandResult again = tvlink("status " + quote(board.port()));
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
}

TEST(Tvlink, PullCopiesTheCardsPhotosByteForByteThenNothing) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  TV_REQUIRE_SHARED("datasets/webmcu-b");
  const std::string card = simtest::copy_card(tvtest::shared_path("datasets/webmcu-b"));
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string dest = tvtest::temp_dir("pulled") + "/photos";
  const tvtest::CommandResult r = tvlink("pull " + quote(board.port()) + " " + quote(dest));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto want = linktest::snapshot(card + "/images");
  ASSERT_EQ(want.size(), 90u);
  EXPECT_EQ(linktest::snapshot(dest), want);  // the same names and bytes, nothing else (no temporaries)
  EXPECT_TRUE(has(r.out, "90 photos copied")) << r.out;
  // a second pull transfers nothing
  const tvtest::CommandResult again = tvlink("pull " + quote(board.port()) + " " + quote(dest));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_TRUE(has(again.out, "0 photos copied (0 bytes), 90 already there")) << again.out;
  EXPECT_EQ(linktest::snapshot(dest), want);
}

TEST(Tvlink, PullNeverOverwritesALocalFileThatDiffers) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 3);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string dest = tvtest::temp_dir("pulled");
  fs::create_directories(dest + "/1circle");
  tvtest::write_text(dest + "/1circle/img_001.jpg", "my own file");
  fs::create_symlink("/etc/hostname", dest + "/1circle/img_002.jpg");
  ASSERT_EQ(mkfifo((dest + "/1circle/img_000.jpg").c_str(), 0644), 0);
  const tvtest::CommandResult r = tvlink("pull " + quote(board.port()) + " " + quote(dest));
  EXPECT_EQ(r.status, 3) << r.err;  // some photos did not arrive, each named
  EXPECT_TRUE(has(r.out, "3 photos copied")) << r.out;
  EXPECT_TRUE(has(r.err, "kept " + dest + "/1circle/img_000.jpg (a FIFO (named pipe))")) << r.err;
  EXPECT_TRUE(has(r.err, "kept " + dest + "/1circle/img_001.jpg (differs from the board's ")) << r.err;
  EXPECT_TRUE(has(r.err, "kept " + dest + "/1circle/img_002.jpg (a symbolic link)")) << r.err;
  EXPECT_EQ(tvtest::read_text(dest + "/1circle/img_001.jpg"), "my own file");
  EXPECT_TRUE(fs::is_symlink(dest + "/1circle/img_002.jpg"));
  EXPECT_EQ(tvtest::read_text(dest + "/0blank/img_000.jpg"), tvtest::read_text(card + "/images/0blank/img_000.jpg"));
  // a class folder that is a link elsewhere is never written through
  const std::string other = tvtest::temp_dir("elsewhere"), dest2 = tvtest::temp_dir("pulled2");
  fs::create_symlink(other, dest2 + "/0blank");
  const tvtest::CommandResult l = tvlink("pull " + quote(board.port()) + " " + quote(dest2));
  EXPECT_EQ(l.status, 1);
  EXPECT_TRUE(has(l.err, dest2 + "/0blank exists and is not a folder (a symbolic link)")) << l.err;
  EXPECT_TRUE(fs::is_empty(other));
}

TEST(Tvlink, TheBoardServesNothingOutsideImages) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 2);
  fs::create_directories(card + "/header");
  tvtest::write_text(card + "/header/secret.txt", "not for the PC");
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  std::unique_ptr<tvh::SerialPort> port = tvh::open_serial(board.port());
  tvh::LinkClient link(*port);
  auto refusal = [&](const std::string& path) {
    try {
      link.read(path);
    } catch (const tvh::BoardRefused& e) {
      return std::string(e.what());
    }
    return std::string("(served)");
  };
  EXPECT_TRUE(has(refusal("../header/secret.txt"), "'..' part")) << refusal("../header/secret.txt");
  EXPECT_TRUE(has(refusal("0blank/../../header/secret.txt"), "'..' part"));
  EXPECT_TRUE(has(refusal("/header/secret.txt"), "absolute paths are refused"));
  EXPECT_TRUE(has(refusal(std::string(200, 'a')), "at most 128"));
  EXPECT_TRUE(has(refusal("0blank\\..\\x"), "backslash"));
  EXPECT_TRUE(has(refusal("0blank"), "not a file on the card"));
  try {
    link.list("..");
    ADD_FAILURE() << "listed ..";
  } catch (const tvh::BoardRefused& e) {
    EXPECT_TRUE(has(e.what(), "'..' part")) << e.what();
  }
  // a frame lying about its length is dropped; the next good request is answered
  uint8_t lie[64] = {tv::link::kMagic0, tv::link::kMagic1, tv::link::kStatus, 1, 0, 0, 0, 0xff, 0xff};
  port->write(lie, sizeof lie);
  uint8_t shorter[16];
  const size_t n = tv::link::encode_frame(tv::link::kStatus, 7, nullptr, 0, shorter, sizeof shorter);
  shorter[7] = 40;  // says 40 payload bytes, holds none: its CRC cannot match
  port->write(shorter, n);
  EXPECT_TRUE(has(link.status(), "class=0blank 2"));
  // and what is inside /images is served
  EXPECT_EQ(link.read("0blank/img_000.jpg").size(), fs::file_size(card + "/images/0blank/img_000.jpg"));
}

TEST(Tvlink, CaptureTakesPhotosWithTheBoardsCamera) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = tvtest::temp_dir("capcard"), cam = tvtest::temp_dir("capcam");
  const std::vector<std::string> frames = simtest::sorted_jpegs(simtest::shapes_dir() + "/1circle");
  for (size_t i = 0; i < 4; ++i) fs::copy_file(simtest::shapes_dir() + "/1circle/" + frames[i], cam + "/" + frames[i]);
  PtyBoard board("--sd " + quote(card) + " --camera " + quote(cam) + " --labels 0blank,1circle");
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult r = tvlink("capture " + quote(board.port()) + " --class 1circle --count 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "saved 3 photos of 1circle (3 on the card)\n");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(tvtest::read_text(card + "/images/1circle/img_" + std::to_string(i) + ".jpg"),
              tvtest::read_text(cam + "/" + frames[i]));
  const tvtest::CommandResult unknown = tvlink("capture " + quote(board.port()) + " --class 2cross");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_TRUE(has(unknown.err, "the board took no photo: the model in use has no class named '2cross'")) << unknown.err;
  // one frame left in the camera: one photo, then none
  const tvtest::CommandResult rest = tvlink("capture " + quote(board.port()) + " --class 0blank --count 5");
  EXPECT_EQ(rest.status, 0) << rest.err;
  EXPECT_EQ(rest.out, "saved 1 photo of 0blank (1 on the card)\n");
  const tvtest::CommandResult none = tvlink("capture " + quote(board.port()) + " --class 0blank");
  EXPECT_EQ(none.status, 1);
  EXPECT_TRUE(has(none.err, "no photo was saved")) << none.err;
  EXPECT_TRUE(has(tvlink("status " + quote(board.port())).out, "class=0blank 1\nclass=1circle 3\n"));
}

// One client per port: while one holds it (an flock, which binds root too), a second tvlink is refused
// with a sentence and the first goes on undisturbed.
TEST(Tvlink, ASecondClientIsRefusedWhileTheFirstHoldsThePort) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 2);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  {
    std::unique_ptr<tvh::SerialPort> port = tvh::open_serial(board.port());
    tvh::LinkClient first(*port);
    const tvtest::CommandResult second = tvlink("status " + quote(board.port()));
    EXPECT_EQ(second.status, 1);
    EXPECT_EQ(second.out, "");
    EXPECT_TRUE(has(second.err, "the port " + board.port() + " is in use by another tvlink")) << second.err;
    EXPECT_TRUE(has(first.status(), "class=0blank 2\n"));
  }
  const tvtest::CommandResult after = tvlink("status " + quote(board.port()));
  EXPECT_EQ(after.status, 0) << after.err;
}

// A card file the board cannot read as a photo (a FIFO named like one) is named with the board's reason;
// every other photo still comes, and the exit status says some did not arrive (3).
TEST(Tvlink, APhotoTheBoardCannotReadDoesNotStopThePull) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 3);
  ASSERT_EQ(mkfifo((card + "/images/0blank/img_000b.jpg").c_str(), 0644), 0);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string dest = tvtest::temp_dir("pulledfifo");
  for (int round = 0; round < 2; ++round) {
    const tvtest::CommandResult r = tvlink("pull " + quote(board.port()) + " " + quote(dest));
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_TRUE(has(r.out, round == 0 ? "6 photos copied" : "0 photos copied")) << r.out;
    EXPECT_TRUE(has(r.err, "tvlink: not copied: /images/0blank/img_000b.jpg (the board: ")) << r.err;
    EXPECT_TRUE(has(r.err, "1 files could not be read on the card; every other photo was copied")) << r.err;
  }
  EXPECT_EQ(simtest::sorted_jpegs(dest + "/0blank").size() + simtest::sorted_jpegs(dest + "/1circle").size(), 6u);
  EXPECT_FALSE(fs::exists(dest + "/0blank/img_000b.jpg"));
}

// The board's own folder /images/_unsure is never a class (not in the model, not in status, not ignored
// as a bad name), and tvlink pull brings it like any folder.
TEST(Tvlink, UnderscoreFoldersAreNoClassesButArePulled) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 2);
  fs::create_directories(card + "/images/_unsure");
  fs::copy_file(card + "/images/0blank/img_000.jpg", card + "/images/_unsure/frame_1.jpg");
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult s = tvlink("status " + quote(board.port()));
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_TRUE(has(s.out, "model=64x64x3 input, 2 classes")) << s.out;
  EXPECT_FALSE(has(s.out, "_unsure")) << s.out;
  EXPECT_FALSE(has(board.err(), "_unsure"));
  const std::string dest = tvtest::temp_dir("pulledunsure");
  const tvtest::CommandResult r = tvlink("pull " + quote(board.port()) + " " + quote(dest));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "5 photos copied")) << r.out;
  EXPECT_TRUE(fs::exists(dest + "/_unsure/frame_1.jpg"));
}
