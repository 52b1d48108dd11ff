// tvlink pull-model against the simulated board (tvsim --pty), as real child processes: the models the
// board trained come back byte for byte as the card's /header/model.tvb and its backup, a card
// without one gives exit 1 and one sentence, a local file is never damaged, and the board serves
// those two files and nothing else outside /images.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/link/link.h"
#include "link_support.h"
#include "sim_support.h"
#include "tv/crc32.h"
#include "tv/link/link_frame.h"

namespace fs = std::filesystem;
using linktest::PtyBoard;
using linktest::tvlink;
using simtest::has;
using simtest::quote;

namespace {

// The line pull-model prints for a file it wrote.
std::string pulled_line(const std::string& card_path, const std::string& dest, const std::string& bytes) {
  return "pulled " + card_path + " into " + dest + " (" + std::to_string(bytes.size()) + " bytes, CRC-32 0x" +
         simtest::hex(tv::crc32(0, bytes.data(), bytes.size())) + ")\n";
}

// A card with two classes of photos and these bytes as /header/model.tvb and .bak (none when empty).
std::string card_holding(const std::string& model, const std::string& backup) {
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 2);
  fs::create_directories(card + "/header");
  if (!model.empty()) simtest::write_text(card + "/header/model.tvb", model);
  if (!backup.empty()) simtest::write_text(card + "/header/model.tvb.bak", backup);
  return card;
}

}  // namespace

TEST(TvlinkModel, PullsTheModelTheBoardTrainedByteForByte) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  TV_REQUIRE_BINARY("tvexport");
  TV_REQUIRE_BINARY("tvquant");
  // trained and saved by the board itself, twice: the first model is kept as the backup
  const std::string card = simtest::card_with_model();
  const std::string first = tvtest::read_text(card + "/header/model.tvb");
  const simtest::SimRun again_trained = simtest::sim("--sd " + quote(card) + " --epochs 1", simtest::to_train(2));
  ASSERT_EQ(again_trained.status, 0) << again_trained.err;
  const std::string want = tvtest::read_text(card + "/header/model.tvb");
  ASSERT_EQ(tvtest::read_text(card + "/header/model.tvb.bak"), first);
  ASSERT_NE(want, first);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string dir = tvtest::temp_dir("pulledmodel"), dest = dir + "/board.tvb", prev = dir + "/prev.tvb";
  const tvtest::CommandResult r =
      tvlink("pull-model " + quote(board.port()) + " " + quote(dest) + " --backup " + quote(prev));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tvtest::read_text(dest), want);  // byte for byte
  EXPECT_EQ(tvtest::read_text(prev), first);
  EXPECT_EQ(r.out, pulled_line("/header/model.tvb", dest, want) + pulled_line("/header/model.tvb.bak", prev, first));
  EXPECT_EQ(linktest::snapshot(dir).size(), 2u);  // no temporary left beside them
  // the PC's tools read them: inspect, quantize
  simtest::run_tool("tvexport", "info " + quote(dest));
  simtest::run_tool("tvexport", "info " + quote(prev));
  const std::string q8 = tvtest::temp_dir("pulledq8") + "/board.q8.tvb";
  simtest::run_tool("tvquant", quote(dest) + " --calib " + quote(card + "/images") + " -o " + quote(q8));
  EXPECT_TRUE(fs::exists(q8));
  // the same pull again finds it there and writes nothing
  const tvtest::CommandResult again = tvlink("pull-model " + quote(board.port()) + " " + quote(dest));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_TRUE(has(again.out, dest + " already holds the board's /header/model.tvb (")) << again.out;
  EXPECT_EQ(tvtest::read_text(dest), want);
}

TEST(TvlinkModel, PullsTheBackupWhenPresent) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string model = linktest::model_bytes(0.02f, {"0blank", "1circle"});
  const std::string backup = linktest::model_bytes(0.01f, {"0blank", "1circle"});
  const std::string dir = tvtest::temp_dir("pulledbackup");
  {
    const std::string card = card_holding(model, backup);
    PtyBoard board("--sd " + quote(card));
    ASSERT_FALSE(board.port().empty()) << board.err();
    const tvtest::CommandResult r = tvlink("pull-model " + quote(board.port()) + " " + quote(dir + "/m.tvb") +
                                           " --backup " + quote(dir + "/prev.tvb"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(tvtest::read_text(dir + "/m.tvb"), model);
    EXPECT_EQ(tvtest::read_text(dir + "/prev.tvb"), backup);
    EXPECT_EQ(r.out, pulled_line("/header/model.tvb", dir + "/m.tvb", model) +
                         pulled_line("/header/model.tvb.bak", dir + "/prev.tvb", backup));
  }
  {  // no backup on the card: the model is pulled, the missing backup said, exit 1
    const std::string card = card_holding(model, "");
    PtyBoard board("--sd " + quote(card));
    ASSERT_FALSE(board.port().empty()) << board.err();
    const tvtest::CommandResult r = tvlink("pull-model " + quote(board.port()) + " " + quote(dir + "/m2.tvb") +
                                           " --backup " + quote(dir + "/prev2.tvb"));
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_EQ(tvtest::read_text(dir + "/m2.tvb"), model);
    EXPECT_FALSE(fs::exists(dir + "/prev2.tvb"));
    EXPECT_EQ(r.err, "tvlink: nothing pulled into " + dir +
                         "/prev2.tvb: the card holds no backup model (/header/model.tvb.bak is missing: one is kept "
                         "when a model replaces another)\n");
  }
}

TEST(TvlinkModel, NoModelOnTheCardExitsOneWithOneSentence) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 2);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string dest = tvtest::temp_dir("nomodel") + "/board.tvb";
  const tvtest::CommandResult r = tvlink("pull-model " + quote(board.port()) + " " + quote(dest));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tvlink: nothing pulled into " + dest +
                       ": the card holds no model (/header/model.tvb is missing): train, Learn or push one first\n");
  EXPECT_FALSE(fs::exists(dest));
  // a folder where the model belongs is no model either
  fs::create_directories(card + "/header/model.tvb");
  const tvtest::CommandResult folder = tvlink("pull-model " + quote(board.port()) + " " + quote(dest));
  EXPECT_EQ(folder.status, 1);
  EXPECT_TRUE(has(folder.err, ": /header/model.tvb is not a file on the card\n")) << folder.err;
  EXPECT_FALSE(fs::exists(dest));
}

TEST(TvlinkModel, AnExistingDestinationIsNeverDamaged) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string model = linktest::model_bytes(0.02f, {"0blank", "1circle"});
  const std::string card = card_holding(model, "");
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string dir = tvtest::temp_dir("keepmine"), mine = dir + "/mine.tvb";
  simtest::write_text(mine, "my own model");
  const std::string pull = "pull-model " + quote(board.port()) + " ";
  const tvtest::CommandResult r = tvlink(pull + quote(mine));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(has(r.err, "tvlink: kept " + mine + ", not overwritten: it differs from the board's /header/model.tvb (" +
                             std::to_string(model.size()) + " bytes, CRC-32 0x"))
      << r.err;
  EXPECT_TRUE(has(r.err, "give --force to replace it")) << r.err;
  EXPECT_EQ(tvtest::read_text(mine), "my own model");
  // a link is never written through, a folder or a read-only file never replaced, --force or not
  fs::create_symlink(mine, dir + "/link.tvb");
  fs::create_directories(dir + "/folder.tvb");
  simtest::write_text(dir + "/ro.tvb", "read-only");
  fs::permissions(dir + "/ro.tvb", fs::perms::owner_read);
  for (const char* name : {"/link.tvb", "/folder.tvb", "/ro.tvb"}) {
    const tvtest::CommandResult k = tvlink(pull + quote(dir + name) + " --force");
    EXPECT_EQ(k.status, 1) << name;
    EXPECT_TRUE(has(k.err, "tvlink: the destination " + dir + name + ": ")) << k.err;
  }
  EXPECT_TRUE(fs::is_symlink(dir + "/link.tvb"));
  EXPECT_TRUE(fs::is_directory(dir + "/folder.tvb"));
  EXPECT_EQ(tvtest::read_text(dir + "/ro.tvb"), "read-only");
  EXPECT_EQ(tvtest::read_text(mine), "my own model");
  // the model and its backup into one file is refused before the board is asked
  const tvtest::CommandResult same = tvlink(pull + quote(dir + "/x.tvb") + " --backup " + quote(dir + "/x.tvb"));
  EXPECT_EQ(same.status, 1);
  EXPECT_TRUE(has(same.err, "it is the same file as --backup")) << same.err;
  // told to, it replaces the file (whole: through a temporary renamed into place)
  const tvtest::CommandResult forced = tvlink(pull + quote(mine) + " --force");
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(forced.out, pulled_line("/header/model.tvb", mine, model));
  EXPECT_EQ(tvtest::read_text(mine), model);
  fs::permissions(dir + "/ro.tvb", fs::perms::owner_all);
  std::set<std::string> names;  // and no temporary left anywhere
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"folder.tvb", "link.tvb", "mine.tvb", "ro.tvb"}));
}

// The board goes away mid-transfer (a slow link, then tvsim stopped): exit 1, and the file tvlink was
// told to replace (--force) is left whole, with no temporary beside it.
TEST(TvlinkModel, ABoardLostMidTransferLeavesTheDestinationWhole) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string model = linktest::model_bytes(0.02f, {"0blank", "1circle"});
  const std::string card = card_holding(model, "");
  const std::string dir = tvtest::temp_dir("lostboard"), mine = dir + "/mine.tvb";
  simtest::write_text(mine, "my own model");
  // about three seconds for the model at this rate
  auto board = std::make_unique<PtyBoard>("--sd " + quote(card) + " --link-rate " + std::to_string(model.size() / 3));
  ASSERT_FALSE(board->port().empty()) << board->err();
  const std::string port = board->port();
  tvtest::CommandResult r;
  std::thread host([&] { r = tvlink("pull-model " + quote(port) + " " + quote(mine) + " --force"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  board.reset();  // SIGTERM: the board and its pseudo-terminal go away
  host.join();
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("tvlink: ", 0), 0u) << r.err;  // one sentence: the board or its port went away
  EXPECT_EQ(tvtest::read_text(mine), "my own model");
  EXPECT_EQ(linktest::snapshot(dir).size(), 1u);
}

TEST(TvlinkModel, TheBoardServesTheTwoModelFilesAndNothingElse) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string model = linktest::model_bytes(0.02f, {"0blank", "1circle"});
  const std::string backup = linktest::model_bytes(0.01f, {"0blank", "1circle"});
  const std::string card = card_holding(model, backup);
  simtest::write_text(card + "/header/model.tvb.tmp", "an interrupted save");
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  std::unique_ptr<tvh::SerialPort> port = tvh::open_serial(board.port());
  tvh::LinkClient link(*port);
  std::string name;
  const std::vector<uint8_t> m = link.read_model(tv::link::kModelFile, &name);
  EXPECT_EQ(std::string(m.begin(), m.end()), model);
  EXPECT_EQ(name, "/header/model.tvb");
  const std::vector<uint8_t> b = link.read_model(tv::link::kModelBackup, &name);
  EXPECT_EQ(std::string(b.begin(), b.end()), backup);
  EXPECT_EQ(name, "/header/model.tvb.bak");
  for (uint8_t which : {2, 0x2e, 0xff}) {
    try {
      link.read_model(which);
      ADD_FAILURE() << "served model file " << (int)which;
    } catch (const tvh::BoardRefused& e) {
      EXPECT_TRUE(has(e.what(), "names neither the model (0) nor its backup (1)")) << e.what();
    }
  }
  // the photo requests still reach nothing under /header
  try {
    link.read("../header/model.tvb");
    ADD_FAILURE() << "served ../header/model.tvb";
  } catch (const tvh::BoardRefused& e) {
    EXPECT_TRUE(has(e.what(), "'..' part")) << e.what();
  }
}
