// The firmware application as a 32-bit program (long and size_t of 32 bits, as on the ESP32-S3), on an
// in-memory board: a card of files, camera frames, a serial port, PSRAM whose every allocation is
// measured. The board's JPEG decoder checks that the buffer the app hands it holds width * height * 3
// bytes, so an overflowed size is caught where the real decoder would write past the buffer.
#include <gtest/gtest.h>

#include <string>

#include "app.h"
#include "core/forged_model.h"
#include "memory_board.h"

static_assert(sizeof(long) == 4 && sizeof(size_t) == 4, "this test is built with -m32 (scripts/test.sh)");

namespace {

using namespace m32test;

// A tinyvision model (He-init weights), as a .tvb on the card.
void put_model(MemoryBoard& board) {
  const Bytes blob = tinyvision_blob(5);
  ASSERT_FALSE(blob.empty());
  board.dirs.insert("/header");
  board.files["/header/model.tvb"] = blob;
}

// Runs the app until it waits for input with none left.
void run(tvfw::App& app, MemoryBoard& board) {
  for (int i = 0; i < 100000; ++i) {
    app.loop();
    if (board.serial_in.empty() && app.waiting_for_input()) return;
  }
  FAIL() << "the app never came back to waiting for input";
}

}  // namespace

TEST(Firmware32, ACraftedJpegSizeIsSkippedNotDecodedIntoATooSmallBuffer) {
  MemoryBoard board;
  put_model(board);
  // 43692 x 65535 x 3 = 8,590,062,060 bytes: 127,468 modulo 2^32, the overflowed size_t of the board
  board.frames = {jpeg_header(43692, 65535, 1), jpeg_header(48, 48, 2)};
  tvfw::AppConfig cfg;
  tvfw::App app(board, cfg);
  app.setup();
  ASSERT_NE(board.out.find("Weights: SD (/header/model.tvb"), std::string::npos) << board.out;
  for (char c : std::string("ttttl")) board.serial_in.push_back(c);  // Infer
  run(app, board);
  EXPECT_NE(board.out.find("Frame 1: skipped, 43692x65535 is larger than the 1048576 pixels this firmware decodes"),
            std::string::npos)
      << board.out;
  EXPECT_NE(board.out.find("Frame 2: "), std::string::npos);
  EXPECT_NE(board.out.find("Pred: "), std::string::npos);
  EXPECT_EQ(board.overflows, 0);
  EXPECT_EQ(board.decodes, 1);  // only the honest frame
}

TEST(Firmware32, BootsTheCardsModelInfersAndTrainsFurther) {
  MemoryBoard board;
  put_model(board);
  put_photos(board, kLabels, 3, 5);
  tvfw::AppConfig cfg;
  cfg.epochs = 1;
  tvfw::App app(board, cfg);
  app.setup();
  for (char c : std::string("tttl")) board.serial_in.push_back(c);  // to Train
  run(app, board);
  EXPECT_NE(board.out.find("Val: 9 images  Train: 6 images"), std::string::npos) << board.out;
  EXPECT_NE(board.out.find("Weights saved to SD: /header/model.tvb"), std::string::npos) << board.out;
  EXPECT_EQ(board.overflows, 0);
  EXPECT_TRUE(board.files.count("/header/model.tvb.bak"));
  static tv::BlobView saved;
  const Bytes& blob = board.files["/header/model.tvb"];
  EXPECT_TRUE(tv::blob_decode(blob.data(), blob.size(), &saved).ok());
  EXPECT_EQ(saved.model.num_classes, 3);
}

// Learn as a 32-bit program: a new class folder imprinted and the head update on cached features, the
// model saved with four classes; every decode into a buffer of the right size.
TEST(Firmware32, LearnAddsANewClassFolder) {
  MemoryBoard board;
  put_model(board);
  const char* const folders[] = {"0blank", "1circle", "2cross", "3star"};
  put_photos(board, folders, 4, 5);
  tvfw::AppConfig cfg;
  cfg.epochs = 2;
  tvfw::App app(board, cfg);
  app.setup();
  ASSERT_NE(board.out.find("8. 3star (new: Learn adds it)"), std::string::npos) << board.out;
  for (char c : std::string("tttttl")) board.serial_in.push_back(c);  // to Learn
  run(app, board);
  EXPECT_NE(board.out.find("Imprinted class 3 (3star) from 2 training photos"), std::string::npos) << board.out;
  EXPECT_NE(board.out.find("--- Learning Complete ---"), std::string::npos) << board.out;
  EXPECT_NE(board.out.find("Weights saved to SD: /header/model.tvb"), std::string::npos) << board.out;
  EXPECT_EQ(board.overflows, 0);
  EXPECT_EQ(board.decodes, 20);
  static tv::BlobView saved;
  const Bytes& blob = board.files["/header/model.tvb"];
  ASSERT_TRUE(tv::blob_decode(blob.data(), blob.size(), &saved).ok());
  EXPECT_EQ(saved.model.num_classes, 4);
}

// A forged model whose work buffer is 2^31 floats (8 GiB; 0 bytes in a 32-bit size_t): refused at boot
// with the real figure, never planned into a wrapped, too-small buffer.
TEST(Firmware32, AForgedModelWhoseSizesWrapIsRefusedWithTheRealFigure) {
  MemoryBoard board;
  board.dirs.insert("/header");
  board.files["/header/model.tvb"] = tvtest::forged_blob();
  ASSERT_FALSE(board.files["/header/model.tvb"].empty());
  board.dirs.insert("/images");
  board.dirs.insert("/images/a");
  board.dirs.insert("/images/b");
  tvfw::AppConfig cfg;
  tvfw::App app(board, cfg);
  app.setup();
  EXPECT_NE(board.out.find("SD /header/model.tvb refused: its network is too large: a tensor would hold 2147418112 "
                           "floats (8589672448 bytes) at layer 0, more than the 33554431 a model may have"),
            std::string::npos)
      << board.out;
  EXPECT_NE(board.out.find("Weights: backbone"), std::string::npos);
  EXPECT_EQ(board.overflows, 0);
}
