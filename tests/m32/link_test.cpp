// The board's USB link as a 32-bit program (as on the ESP32-S3): a pushed model installed through
// the protocol, and forged models (corrupted bytes, absurd network sizes) refused without an
// overflow, the card unchanged; the card's model and its backup sent back by ReadModel.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "app.h"
#include "core/forged_model.h"
#include "link_drive.h"
#include "memory_board.h"
#include "tv/rng.h"

using namespace m32test;

namespace {

struct LinkBoard {
  MemoryBoard board;
  tvfw::AppConfig cfg;
  std::unique_ptr<tvfw::App> app;
  explicit LinkBoard(uint64_t seed) {
    board.dirs.insert("/header");
    board.files["/header/model.tvb"] = tinyvision_blob(seed);
    app.reset(new tvfw::App(board, cfg));
    app->setup();
  }
};

}  // namespace

TEST(Link32, APushedModelIsInstalledByteForByte) {
  LinkBoard b(5);
  const Bytes pushed = tinyvision_blob(6);
  ASSERT_TRUE(run_stream(*b.app, b.board, push_stream(pushed)));
  EXPECT_NE(b.board.out.find("USB link: installed /header/model.tvb"), std::string::npos) << b.board.out;
  EXPECT_EQ(b.board.files["/header/model.tvb"], pushed);
  EXPECT_EQ(b.board.files["/header/model.tvb.bak"], tinyvision_blob(5));
  EXPECT_NE(b.board.out.find("USB link: closed"), std::string::npos);
  EXPECT_EQ(b.board.overflows, 0);
}

TEST(Link32, ForgedModelsAreRefusedWithoutAnOverflowAndChangeNothing) {
  const Bytes good = tinyvision_blob(6);
  tv::Rng rng(11);
  int refused = 0;
  for (int trial = 0; trial < 40; ++trial) {
    LinkBoard b(5);
    const auto before = b.board.files;
    Bytes forged = good;
    // a few bytes of the header and network description set to extreme values, then the file's CRC
    // left as it is (refused for it) or, every other trial, fixed up so the forged sizes reach the planner
    const int flips = 1 + (int)rng.below(4);
    for (int f = 0; f < flips; ++f) {
      const size_t at = 16 + rng.below(512 - 16);  // the header's sizes and the network description
      const uint8_t extremes[] = {0x00, 0xff, 0x7f, 0x80};
      forged[at] = extremes[rng.below(4)];
    }
    if (trial % 2 == 1)  // the .tvb's CRC-32 (header bytes 12..15, over bytes 16..) made to match
      tv::write_le32(forged.data() + 12, tv::crc32(0, forged.data() + 16, forged.size() - 16));
    if (forged == good) continue;
    ASSERT_TRUE(run_stream(*b.app, b.board, push_stream(forged)));
    EXPECT_EQ(b.board.overflows, 0);
    if (b.board.out.find("USB link: installed") == std::string::npos) {
      ++refused;
      EXPECT_EQ(b.board.files, before) << "trial " << trial;
      EXPECT_NE(b.board.out.find("Weights: SD (/header/model.tvb"), std::string::npos);
    } else {
      EXPECT_EQ(b.board.files["/header/model.tvb"], forged);  // what was verified is what is installed
    }
  }
  EXPECT_GT(refused, 10);
}

TEST(Link32, DataOutOfOrderOrRepeatedIsIgnoredAndAMissingFrameRefused) {
  namespace lk = tv::link;
  const Bytes model = tinyvision_blob(6);
  ASSERT_GT(model.size(), 3 * lk::kMaxPayload);  // at least four Data frames
  const uint32_t chunks = data_frames(model);
  const Bytes head = push_head(model);
  {  // 0, 0 again, 2 (ahead: dropped), 1, 2, ...: what go-back-N delivers after a loss
    LinkBoard b(5);
    Bytes s = head;
    add_data(&s, model, 0);
    add_data(&s, model, 0);
    add_data(&s, model, 2);
    for (uint32_t k = 1; k < chunks; ++k) add_data(&s, model, k);
    add_frame(&s, lk::kPushEnd, 3, nullptr, 0);
    ASSERT_TRUE(run_stream(*b.app, b.board, s));
    EXPECT_EQ(b.board.files["/header/model.tvb"], model) << b.board.out;
  }
  {  // frame 1 never arrives: the board refuses at PushEnd, the card unchanged
    LinkBoard b(5);
    const auto before = b.board.files;
    Bytes s = head;
    for (uint32_t k = 0; k < chunks; ++k)
      if (k != 1) add_data(&s, model, k);
    add_frame(&s, lk::kPushEnd, 3, nullptr, 0);
    ASSERT_TRUE(run_stream(*b.app, b.board, s));
    EXPECT_EQ(b.board.files, before);
    EXPECT_NE(b.board.out.find("only part of the model arrived"), std::string::npos);
    EXPECT_NE(b.board.out.find("USB link: the PC fell silent; back to the menu"), std::string::npos);
  }
}

TEST(Link32, APushedModelsLabelsBecomeFolderNamesByTheBootRules) {
  LinkBoard b(5);
  const char* const labels[] = {"../header", "ok", "a/b"};
  const Bytes pushed = tinyvision_blob(6, labels);
  ASSERT_TRUE(run_stream(*b.app, b.board, push_stream(pushed)));
  EXPECT_EQ(b.board.files["/header/model.tvb"], pushed);  // the file as sent
  // but no class folder outside /images: the unusable names are class<i>, as at boot
  EXPECT_NE(b.board.out.find("note: class 0's label cannot name a card folder"), std::string::npos) << b.board.out;
  EXPECT_NE(b.board.out.find("note: class 2's label cannot name a card folder"), std::string::npos);
  EXPECT_NE(b.board.out.find("  class 0: class0\n  class 1: ok\n  class 2: class2\n"), std::string::npos)
      << b.board.out;
}

// The forged model of issue 20 (a 2^31-float work buffer: 0 bytes in a 32-bit size_t) pushed over the
// link: refused by the planner with the real figure, not wrapped, and the card and model unchanged.
TEST(Link32, APushedModelWhoseSizesWrapIsRefusedWithTheRealFigure) {
  LinkBoard b(5);
  const auto before = b.board.files;
  const std::vector<uint8_t> forged = tvtest::forged_blob();
  ASSERT_FALSE(forged.empty());
  ASSERT_TRUE(run_stream(*b.app, b.board, push_stream(forged)));
  EXPECT_NE(b.board.out.find("its network is too large: a tensor would hold 2147418112 floats (8589672448 bytes) "
                             "at layer 0"),
            std::string::npos)
      << b.board.out;
  EXPECT_NE(b.board.out.find("USB link: the pushed model was not installed"), std::string::npos);
  EXPECT_EQ(b.board.files, before);
  EXPECT_NE(b.board.out.find("Weights: SD (/header/model.tvb"), std::string::npos);
  EXPECT_EQ(b.board.overflows, 0);
}

namespace {

// What a board sent for a ReadModel of seq 2: its answer's type and payload, and the file the Data
// frames carried (when the End's CRC-32 matched them).
struct ModelAnswer {
  uint8_t type = 0;
  std::string payload;
  Bytes file;
  bool end_ok = false;
};

ModelAnswer read_model(LinkBoard& b, uint8_t which) {
  namespace lk = tv::link;
  Bytes s;
  add_hello(&s, 1);
  add_frame(&s, lk::kReadModel, 2, &which, 1);
  // a PC acknowledging every chunk and the End in turn (the board reads one after each frame it sends)
  size_t largest = 0;
  for (const auto& f : b.board.files) largest = std::max(largest, f.second.size());
  for (uint32_t k = 1; k <= (uint32_t)(largest / lk::kMaxPayload) + 2; ++k) {
    uint8_t ack[4];
    tv::write_le32(ack, k);
    add_frame(&s, lk::kAck, k - 1, ack, sizeof ack);
  }
  add_frame(&s, lk::kBye, 3, nullptr, 0);
  b.board.out.clear();
  EXPECT_TRUE(run_stream(*b.app, b.board, s));
  ModelAnswer a;
  lk::FrameParser p;
  p.set_session(kSession);
  for (char c : b.board.out)
    for (lk::FrameParser::Result r = p.feed((uint8_t)c); r != lk::FrameParser::kNone; r = p.drain()) {
      const lk::Frame& f = p.frame();
      if (r != lk::FrameParser::kFrame) continue;
      if ((f.type == lk::kOk || f.type == lk::kErr) && f.seq == 2 && !a.type) {
        a.type = f.type;
        a.payload.assign((const char*)f.payload, f.len);
      } else if (f.type == lk::kData && f.seq * lk::kMaxPayload == a.file.size()) {
        a.file.insert(a.file.end(), f.payload, f.payload + f.len);
      } else if (f.type == lk::kEnd && f.len == 4) {
        a.end_ok = tv::read_le32(f.payload) == tv::crc32(0, a.file.data(), a.file.size());
      }
    }
  return a;
}

}  // namespace

// ReadModel on the 32-bit board: the card's model and its backup byte for byte, their size and path
// in the answer; a missing backup and any other file number refused with the reason.
TEST(Link32, ReadModelSendsTheCardsModelAndItsBackupAndNothingElse) {
  LinkBoard b(5);
  b.board.files["/header/model.tvb.bak"] = tinyvision_blob(4);
  for (uint8_t which : {tv::link::kModelFile, tv::link::kModelBackup}) {
    const std::string path = which == tv::link::kModelFile ? "/header/model.tvb" : "/header/model.tvb.bak";
    const Bytes want = b.board.files[path];
    const ModelAnswer a = read_model(b, which);
    ASSERT_EQ(a.type, tv::link::kOk) << a.payload;
    ASSERT_EQ(a.payload.size(), 4 + path.size());
    EXPECT_EQ(tv::read_le32((const uint8_t*)a.payload.data()), want.size());
    EXPECT_EQ(a.payload.substr(4), path);
    EXPECT_EQ(a.file, want);
    EXPECT_TRUE(a.end_ok);
  }
  for (uint8_t which : {2, 0x2e, 0xff}) {
    const ModelAnswer a = read_model(b, which);
    EXPECT_EQ(a.type, tv::link::kErr);
    EXPECT_EQ(a.payload, "the model request names neither the model (0) nor its backup (1)");
  }
  b.board.files.erase("/header/model.tvb.bak");
  const ModelAnswer none = read_model(b, tv::link::kModelBackup);
  EXPECT_EQ(none.type, tv::link::kErr);
  EXPECT_NE(none.payload.find("the card holds no backup model (/header/model.tvb.bak is missing"), std::string::npos)
      << none.payload;
  EXPECT_EQ(b.board.overflows, 0);
}
