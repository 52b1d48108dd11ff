// The board's class limit and folder names on the simulated board: Learn takes new class folders by
// name up to 16 classes and names the ones it leaves out; a name FAT takes for an existing class's
// folder captures into that folder; an existing class's name captures even when no class can be added.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim_support.h"
#include "tv/model/blob.h"

namespace fs = std::filesystem;
using simtest::has;
using simtest::quote;

namespace {

// A card with the board's trained 2-class model and `n` more class folders z00.. (made in reverse name
// order), 3 photos each.
std::string card_with_new_folders(int n) {
  const std::string card = simtest::card_with_model();
  const std::vector<std::string> photos = simtest::sorted_jpegs(simtest::shapes_dir() + "/2cross");
  for (int i = n - 1; i >= 0; --i) {
    char name[8];
    std::snprintf(name, sizeof name, "z%02d", i);
    fs::create_directories(card + "/images/" + name);
    for (int k = 0; k < 3; ++k)
      fs::copy_file(simtest::shapes_dir() + "/2cross/" + photos[(size_t)(i * 3 + k) % photos.size()],
                    card + "/images/" + name + "/img_" + std::to_string(k) + ".jpg");
  }
  return card;
}

}  // namespace

TEST(TvsimClassLimit, LearnTakesNewFoldersByNameAndNamesTheRest) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_new_folders(20);
  // items: 0blank, 1circle, Train, Infer, Learn: four t, then l
  const simtest::SimRun r = simtest::sim("--sd " + quote(card), "ttttl\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "6 class folders are left out (a model has at most 16 classes; the first by name are taken): "
                  "z14, z15, z16 and 3 more"))
      << r.out;
  std::vector<std::string> want = simtest::kShapes2;
  for (int i = 0; i < 14; ++i) want.push_back((i < 10 ? "z0" : "z1") + std::to_string(i % 10));
  EXPECT_EQ(simtest::tvb_labels(card + "/header/model.tvb"), want) << r.out;
}

TEST(TvsimClassLimit, ANameFatTakesForAClassFolderCapturesIntoThatFolder) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = simtest::card_with_model();
  const std::string cam = simtest::make_camera(simtest::shapes_dir(), simtest::kShapes2);
  const size_t before = simtest::sorted_jpegs(card + "/images/1circle").size();
  const simtest::SimRun r = simtest::sim("--sd " + quote(card) + " --camera " + quote(cam), "n 1CIRCLE.\nt\nl\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "1CIRCLE. is the card folder of class 1circle")) << r.out;
  EXPECT_TRUE(has(r.out, "1circle is already a class of the model: capturing into it")) << r.out;
  EXPECT_EQ(simtest::sorted_jpegs(card + "/images/1circle").size(), before + 1);
  EXPECT_FALSE(fs::exists(card + "/images/1CIRCLE."));
}

TEST(TvsimClassLimit, AnExistingClassCapturesWhenNoClassCanBeAdded) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_new_folders(14);  // 2 + 14: the board's 16
  const std::string cam = simtest::make_camera(simtest::shapes_dir(), simtest::kShapes2);
  const simtest::SimRun r =
      simtest::sim("--sd " + quote(card) + " --camera " + quote(cam), "n z03\nt\nl\nn brandnew\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "z03 is already a new class folder: capturing into it")) << r.out;
  EXPECT_EQ(simtest::sorted_jpegs(card + "/images/z03").size(), 4u);
  EXPECT_TRUE(has(r.out, "Cannot add a class: the model and the new class folders already make 16 classes")) << r.out;
  EXPECT_FALSE(fs::exists(card + "/images/brandnew"));
}
