// Pointing a tool at the wrong folder: the parent of a dataset, one class folder of a phone's photo
// library, images beside the class folders, class folders reached twice through links, and files that
// are no images (they must not size the network). Through the real tvtrain and the listing itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/interval.h"
#include "host/photos/dataset.h"
#include "host/photos/layout_check.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

using tvtest::contains;
const std::string kShapes = tvtest::source_path("datasets/shapes");

// Copies the first n images of a shapes class into dir.
void fill(const std::string& dir, const std::string& shape_class, int n, int first = 0) {
  fs::create_directories(dir);
  for (int i = first; i < first + n; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "img_%03d.jpg", i);
    fs::copy_file(kShapes + "/" + shape_class + "/" + name, dir + "/" + name);
  }
}

tvtest::CommandResult tvtrain(const std::string& args) {
  return tvtest::run_capture(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + args);
}

tvh::DatasetListing listing_of(const std::string& path) {
  tvh::DatasetOptions o;
  o.path = path;
  o.height = o.width = 16;
  o.channels = 3;
  return tvh::list_dataset(o);
}

}  // namespace

TEST(LayoutCheck, PhotoLibraryFolderNames) {
  for (const char* yes :
       {"2024", "1999", "2024-05", "2024_05_17", "20240517", "2024.05", "DCIM", "dcim", "100APPLE", "101_PANA",
        "100CANON", "100_FUJI", "Camera", "Camera Roll", "Screenshots", "WhatsApp Images"})
    EXPECT_TRUE(tvh::looks_like_photo_library_folder(yes)) << yes;
  for (const char* no :
       {"cats", "0Blank", "1Cup", "2024cats", "100cats", "3000", "24", "class1", "100", "apple", "pen-2024"})
    EXPECT_FALSE(tvh::looks_like_photo_library_folder(no)) << no;
}

TEST(LayoutCheck, OneClassFolderOfAPhotoLibraryIsRefusedWithTheFolderAbove) {
  TV_REQUIRE_BINARY("tvtrain");
  const std::string root = tvtest::temp_dir("layout-lib");
  for (const char* sub : {"2024", "2025", "DCIM"}) fill(root + "/photos/0Blank/" + sub, "0blank", 4);
  fill(root + "/photos/1Cup", "1circle", 4);
  fill(root + "/photos/2Pen", "2cross", 4);
  const std::string out = root + "/m.tvb";
  tvtest::CommandResult r = tvtrain(tvtest::quoted(root + "/photos/0Blank") + " --epochs 1 -o " + tvtest::quoted(out));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "'2024', '2025', 'DCIM' are named like a photo library's")) << r.err;
  EXPECT_TRUE(contains(r.err, "Did you mean the folder above it, '" + root + "/photos'")) << r.err;
  EXPECT_TRUE(contains(r.err, "--classes 2024,2025,DCIM")) << r.err;
  EXPECT_FALSE(contains(r.err, "decoded")) << r.err;  // refused before decoding
  EXPECT_FALSE(fs::exists(out));
  // From inside the folder: the suggestion is the path typed from there.
  r = tvtest::run_capture("cd " + tvtest::quoted(root + "/photos/0Blank") + " && " +
                          tvtest::quoted(tvtest::bin_path("tvtrain")) + " . --epochs 1 -o " + tvtest::quoted(out));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "Did you mean the folder above it, '..' ('0Blank' looks like one class folder beside '1Cup', "
                       "'2Pen')?"))
      << r.err;
  // Years as classes are conceivable: naming them is the override.
  r = tvtrain(tvtest::quoted(root + "/photos/0Blank") +
              " --classes 2024,2025,DCIM --epochs 1 --no-curve --no-confusion -o " + tvtest::quoted(out));
  EXPECT_EQ(r.status, 0) << r.err;
  // The folder above trains on the real classes.
  r = tvtrain(tvtest::quoted(root + "/photos") + " --epochs 1 --no-curve --no-confusion -o " + tvtest::quoted(out));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "classes [0Blank, 1Cup, 2Pen]")) << r.err;
}

TEST(LayoutCheck, SomeLibraryNamesAndLooseImagesAreWarnedAbout) {
  const std::string root = tvtest::temp_dir("layout-some");
  fill(root + "/cats", "0blank", 3);
  fill(root + "/DCIM", "1circle", 3);
  fill(root, "2cross", 2);  // beside the class folders
  const std::vector<std::string> w = tvh::check_layout(listing_of(root), {});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(contains(w[0], "the class folder 'DCIM' is named like a photo library's")) << w[0];
  EXPECT_TRUE(contains(w[1], "2 images lie directly in '" + root + "' beside the class folders 'DCIM', 'cats'"))
      << w[1];
  // A clean dataset: nothing to say.
  EXPECT_TRUE(tvh::check_layout(listing_of(kShapes), {}).empty());
}

TEST(LayoutCheck, TheParentOfADatasetIsRefusedBeforeDecodingWithTheSubFolder) {
  TV_REQUIRE_BINARY("tvtrain");
  const std::string root = tvtest::temp_dir("layout-parent");
  for (const char* c : {"0blank", "1circle", "2cross"}) fill(root + "/mydata/" + c, c, 3);
  const tvtest::CommandResult r = tvtrain(tvtest::quoted(root) + " --epochs 1 -o " + tvtest::quoted(root + "/m.tvb"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "holds one folder with images, 'mydata'")) << r.err;
  EXPECT_TRUE(contains(r.err, "did you mean " + root + "/mydata?")) << r.err;
  EXPECT_FALSE(contains(r.err, "decoded")) << r.err;
  // One class folder with its images directly in it: two are needed, said before decoding too.
  const std::string one = tvtest::temp_dir("layout-one");
  fill(one + "/only", "0blank", 3);
  EXPECT_THROW(tvh::check_layout(listing_of(one), {}), tvh::Error);
  EXPECT_NO_THROW(tvh::check_layout(listing_of(one), {false, false}));  // an --init model brings its classes
}

TEST(LayoutCheck, ClassFoldersReachedTwiceThroughLinksKeepTheFirstByName) {
  const std::string root = tvtest::temp_dir("layout-links");
  fill(root + "/real/b_cats", "0blank", 3);
  fill(root + "/real/d_dogs", "1circle", 3);
  const std::string ds = tvtest::temp_dir("layout-links-ds");
  // Created in an order unlike the names' (the file system's listing order is its own).
  fs::create_directory_symlink(root + "/real/b_cats", ds + "/z_cats");
  fs::create_directory_symlink(root + "/real/d_dogs", ds + "/c_dogs");
  fs::create_directory_symlink(root + "/real/b_cats", ds + "/a_cats");
  fs::create_directory_symlink(root + "/real/d_dogs", ds + "/y_dogs");
  for (int run = 0; run < 3; ++run) {
    const tvh::DatasetListing l = listing_of(ds);
    EXPECT_EQ(l.classes, (std::vector<std::string>{"a_cats", "c_dogs"}));
    ASSERT_EQ(l.warnings.size(), 2u);
    EXPECT_TRUE(contains(l.warnings[0], "'" + ds + "/y_dogs': it is (through a symbolic link) the same folder as '" +
                                            ds + "/c_dogs', which comes first by name and is used"))
        << l.warnings[0];
    EXPECT_TRUE(contains(l.warnings[1], "'" + ds + "/z_cats'")) << l.warnings[1];
  }
  // A link back to the dataset folder is called a loop.
  fs::create_directory_symlink(ds, ds + "/c_dogs_again");
  bool said = false;
  for (const auto& w : listing_of(ds).warnings) said = said || contains(w, "a link loop");
  EXPECT_TRUE(said);
}

TEST(LayoutCheck, FilesThatAreNoImagesDoNotSizeTheNetwork) {
  TV_REQUIRE_BINARY("tvtrain");
  const std::string ds = tvtest::shapes_subset("layout-empty", 4);
  const std::string out = tvtest::temp_dir("layout-empty-out");
  const std::string args = " --epochs 1 --input 16x16x3 -q --json --no-curve --no-confusion -o ";
  const nlohmann::json clean = tvtest::run_json(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + tvtest::quoted(ds) +
                                                args + tvtest::quoted(out + "/a.tvb"));
  // 10,000 empty .jpg files: listed (the preset widens from 10,000 images), never decoded.
  for (int i = 0; i < 10000; ++i) std::ofstream(ds + "/0blank/empty_" + std::to_string(i) + ".jpg");
  const nlohmann::json padded = tvtest::run_json(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " +
                                                 tvtest::quoted(ds) + args + tvtest::quoted(out + "/b.tvb"));
  ASSERT_TRUE(clean.is_object() && padded.is_object());
  EXPECT_EQ(padded["skipped_images"], 10000);
  EXPECT_EQ(padded["params"], clean["params"]);
  EXPECT_EQ(padded["epochs"], clean["epochs"]);
  EXPECT_EQ(tvh::read_file(out + "/a.tvb").size(), tvh::read_file(out + "/b.tvb").size());
}

TEST(AccuracyInterval, EveryAccuracyInJsonHasItsWilsonInterval) {
  TV_REQUIRE_BINARY("tvtrain");
  const std::string ds = tvtest::shapes_subset("interval-ds", 6);
  const std::string out = tvtest::temp_dir("interval-out");
  const std::string tool = tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + tvtest::quoted(ds) + " -q --json ";
  const std::string recipe = "--epochs 1 --input 16x16x3 ";
  auto inside = [](const nlohmann::json& acc, const nlohmann::json& ci) {
    ASSERT_TRUE(acc.is_number()) << acc;
    ASSERT_TRUE(ci.is_array() && ci.size() == 2) << ci;
    EXPECT_LE(ci[0].get<double>(), acc.get<double>());
    EXPECT_GE(ci[1].get<double>(), acc.get<double>());
    EXPECT_LT(ci[0].get<double>(), ci[1].get<double>());
  };
  const nlohmann::json t =
      tvtest::run_json(tool + recipe + "--no-curve --no-confusion -o " + tvtest::quoted(out + "/m.tvb"));
  inside(t["val_accuracy"], t["val_accuracy_interval"]);
  const auto ci = tvh::wilson_interval(t["val_correct"].get<long>(), t["val_images"].get<long>());
  EXPECT_DOUBLE_EQ(t["val_accuracy_interval"][0].get<double>(), ci.first);
  const nlohmann::json e = tvtest::run_json(tool + "--eval --init " + tvtest::quoted(out + "/m.tvb"));
  inside(e["accuracy"], e["accuracy_interval"]);
  const nlohmann::json k = tvtest::run_json(tool + recipe + "--kfold 3");
  inside(k["cv_accuracy_pooled"], k["cv_accuracy_interval"]);
  inside(k["folds"][0]["val_accuracy"], k["folds"][0]["val_accuracy_interval"]);
  // The text says it too, and a wide interval (9 validation images) points to --kfold.
  const tvtest::CommandResult r =
      tvtest::run_capture(tvtest::quoted(tvtest::bin_path("tvtrain")) + " " + tvtest::quoted(ds) +
                          " --epochs 1 --input 16x16x3 --no-curve --no-confusion -o " + tvtest::quoted(out + "/n.tvb"));
  EXPECT_TRUE(contains(r.err, "/9; 95 % interval ")) << r.err;
  EXPECT_TRUE(contains(r.err, "--kfold 5 measures on every image")) << r.err;
  // The run ends with the next command, ready to paste.
  EXPECT_TRUE(contains(r.err, "next: tvquant " + out + "/n.tvb --calib " + ds + " -o " + out + "/n.q8.tvb")) << r.err;
  const tvtest::CommandResult help = tvtest::run_capture(tvtest::quoted(tvtest::bin_path("tvtrain")) + " --help");
  EXPECT_TRUE(contains(help.out, "docs/config.md")) << help.out;
  EXPECT_TRUE(fs::exists(tvtest::source_path("docs/config.md")));
}
