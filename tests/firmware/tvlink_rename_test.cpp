// tvlink rename against the simulated board (tvsim --pty), as real child processes: one step renames the
// card's class folder and the model's label (its weights, int8 tensors and provenance as they were), the
// board runs the renamed class at once and after a reboot, and every refusal leaves the card as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "link_support.h"
#include "sim_support.h"
#include "tv/model/blob.h"

namespace fs = std::filesystem;
using linktest::PtyBoard;
using linktest::tvlink;
using simtest::has;
using simtest::quote;

namespace {

// A .tvb file's bytes with its labels section and the CRC left out: what a rename must keep.
std::string all_but_labels(const std::string& path) {
  const std::string b = tvtest::read_text(path);
  tv::BlobView v;
  if (!tv::blob_decode((const uint8_t*)b.data(), b.size(), &v).ok()) return "";
  std::string out(v.provenance, v.provenance_len);
  for (int i = 0; i < v.num_tensors; ++i) out.append((const char*)v.tensors[i].data, v.tensors[i].bytes);
  out.append((const char*)v.act_exps, (size_t)v.num_act_exps);
  return out + std::to_string(v.flags);
}

std::string rename_args(const PtyBoard& board, const std::string& from, const std::string& to) {
  return "rename " + quote(board.port()) + " " + quote(from) + " " + quote(to);
}

}  // namespace

TEST(TvlinkRename, RenamesTheCardFolderAndTheModelInOneStep) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::card_with_model();  // trained and saved by the board itself
  const std::string model = card + "/header/model.tvb";
  const std::string before = tvtest::read_text(model);
  const size_t photos = simtest::sorted_jpegs(card + "/images/1circle").size();
  ASSERT_GT(photos, 0u);
  {
    PtyBoard board("--sd " + quote(card));
    ASSERT_FALSE(board.port().empty()) << board.err();
    const tvtest::CommandResult r = tvlink(rename_args(board, "1circle", "ring"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "renamed 1circle to ring: /images/ring, " + std::to_string(photos) +
                               " photos; model: /header/model.tvb, "))
        << r.out;
    // the card's folder and the model's label, nothing else
    EXPECT_FALSE(fs::exists(card + "/images/1circle"));
    EXPECT_EQ(simtest::sorted_jpegs(card + "/images/ring").size(), photos);
    EXPECT_EQ(simtest::tvb_labels(model), (std::vector<std::string>{"0blank", "ring"}));
    EXPECT_TRUE(has(tvtest::read_text(card + "/header/model.h"), "\"ring\"")) << "the C header is of the same model";
    // the board runs it at once: status counts the renamed class's photos
    const tvtest::CommandResult s = tvlink("status " + quote(board.port()));
    ASSERT_EQ(s.status, 0) << s.err;
    EXPECT_TRUE(has(s.out, "class=ring " + std::to_string(photos) + "\n")) << s.out;
    EXPECT_FALSE(has(s.out, "1circle")) << s.out;
  }
  // the weights are the board's trained ones: the bytes differ only in the label
  {
    const std::string renamed = tvtest::read_text(model);
    tv::BlobView a, b;
    ASSERT_TRUE(tv::blob_decode((const uint8_t*)before.data(), before.size(), &a).ok());
    ASSERT_TRUE(tv::blob_decode((const uint8_t*)renamed.data(), renamed.size(), &b).ok());
    ASSERT_EQ(a.num_tensors, b.num_tensors);
    for (int i = 0; i < a.num_tensors; ++i)
      EXPECT_EQ(std::string((const char*)a.tensors[i].data, a.tensors[i].bytes),
                std::string((const char*)b.tensors[i].data, b.tensors[i].bytes))
          << i;
    EXPECT_EQ(std::string(a.provenance, a.provenance_len), std::string(b.provenance, b.provenance_len));
  }
  // after a reboot: the class is ring, and the old name is no new class folder
  const simtest::SimRun boot = simtest::sim("--sd " + quote(card), "?\n");
  ASSERT_EQ(boot.status, 0) << boot.err;
  EXPECT_TRUE(has(boot.out, "class 1: ring")) << boot.out;
  EXPECT_FALSE(has(boot.out, "1circle")) << boot.out;
  // renamed back: the board's original model, byte for byte
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult back = tvlink(rename_args(board, "ring", "1circle"));
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(tvtest::read_text(model), before);
  EXPECT_EQ(simtest::sorted_jpegs(card + "/images/1circle").size(), photos);
  // only letter case changes: FAT takes that for the same folder, so the board goes through a hidden name
  const tvtest::CommandResult upper = tvlink(rename_args(board, "1circle", "1Circle"));
  ASSERT_EQ(upper.status, 0) << upper.err;
  EXPECT_TRUE(fs::is_directory(card + "/images/1Circle"));
  EXPECT_FALSE(fs::exists(card + "/images/1circle"));
  EXPECT_FALSE(fs::exists(card + "/images/.renaming"));
  EXPECT_EQ(simtest::tvb_labels(model), (std::vector<std::string>{"0blank", "1Circle"}));
}

TEST(TvlinkRename, AnInt8ModelKeepsItsTensors) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  TV_REQUIRE_BINARY("tvquant");
  const std::string card = simtest::card_with_model();
  const std::string q8 = tvtest::temp_dir("renameq8") + "/m.q8.tvb";
  simtest::run_tool("tvquant",
                    quote(card + "/header/model.tvb") + " --calib " + quote(card + "/images") + " -o " + quote(q8));
  fs::copy_file(q8, card + "/header/model.tvb", fs::copy_options::overwrite_existing);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult r = tvlink(rename_args(board, "0blank", "empty"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, ", int8")) << r.out;
  EXPECT_EQ(simtest::tvb_labels(card + "/header/model.tvb"), (std::vector<std::string>{"empty", "1circle"}));
  EXPECT_EQ(all_but_labels(card + "/header/model.tvb"), all_but_labels(q8));
  const tvtest::CommandResult s = tvlink("status " + quote(board.port()));
  EXPECT_TRUE(has(s.out, "engine=int8\n")) << s.out;
  EXPECT_TRUE(has(s.out, "class=empty ")) << s.out;
}

TEST(TvlinkRename, EveryRefusalLeavesTheCardAsItWas) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::card_with_model();
  simtest::write_text(card + "/images/ring", "a file, not a class folder");
  fs::create_directories(card + "/images/2square");  // a new class folder the model does not have
  const auto unchanged = linktest::snapshot(card);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  struct Case {
    std::string from, to;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"1circle", "a/b", 2, "'a/b' cannot name a class folder: 1 to 31 bytes"},
      {"1circle", "..", 2, "'..' cannot name a class folder"},
      {"1circle", "what?", 2, "'what?' cannot name a class folder"},
      {"1circle", std::string(32, 'x'), 2, "cannot name a class folder"},
      {"nosuch", "ring2", 1, "tvlink: nothing was renamed: the board has no class named 'nosuch'"},
      {"1circle", "0BLANK", 1, "'0BLANK' is already the name of the model's class 0blank"},
      {"1circle", "2square", 1, "'2square' is already the name of the new class folder 2square"},
      {"1circle", "ring", 1, "/images/ring exists on the card and is not a class folder"},
      {"1circle", "1circle", 1, "class 1circle already has that name"},
  };
  for (const Case& c : cases) {
    const tvtest::CommandResult r = tvlink(rename_args(board, c.from, c.to));
    EXPECT_EQ(r.status, c.status) << c.to << r.out << r.err;
    EXPECT_TRUE(has(r.err, c.says)) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(linktest::snapshot(card), unchanged) << c.from << " -> " << c.to;
  }
  // the board still runs its model, and a new class folder renames as a folder
  const tvtest::CommandResult r = tvlink(rename_args(board, "2square", "3triangle"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "renamed 2square to 3triangle: /images/3triangle, 0 photos\n")) << r.out;
  EXPECT_TRUE(fs::is_directory(card + "/images/3triangle"));
  EXPECT_EQ(tvtest::read_text(card + "/header/model.tvb"), unchanged.at("header/model.tvb"));
}

// A blank card's classes are folders only: renamed as folders, and Learn then makes its model with them.
TEST(TvlinkRename, ABlankCardsNewClassIsRenamedAsAFolder) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 3);
  PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult r = tvlink(rename_args(board, "1circle", "ring"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "renamed 1circle to ring: /images/ring, 3 photos\n")) << r.out;
  EXPECT_EQ(simtest::sorted_jpegs(card + "/images/ring").size(), 3u);
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb"));
  const tvtest::CommandResult s = tvlink("status " + quote(board.port()));
  EXPECT_TRUE(has(s.out, "class=ring 3\n")) << s.out;
}
