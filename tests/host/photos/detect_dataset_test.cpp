// The committed object detection dataset datasets/detect and its generator tvgen-detect
// (datasets/generate_detect.cpp): the same bytes again, well-formed YOLO labels, and boxes where the ink is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/photos/jpeg.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

struct DetgenBox {
  int cls = 0;
  double cx = 0, cy = 0, w = 0, h = 0;
};

// Every regular file below `root`, by path relative to it.
std::map<std::string, std::string> detgen_files(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = e.path().string();
  return files;
}

// The lines of a label file, each checked to be "class cx cy w h" with 6 decimals; a bad line fails the test.
std::vector<DetgenBox> detgen_read_labels(const std::string& path) {
  std::vector<DetgenBox> boxes;
  std::istringstream in(tvtest::read_text(path));
  std::string line;
  while (std::getline(in, line)) {
    DetgenBox b;
    char check[96];
    int used = 0;
    const bool parsed =
        std::sscanf(line.c_str(), "%d %lf %lf %lf %lf%n", &b.cls, &b.cx, &b.cy, &b.w, &b.h, &used) == 5 &&
        used == (int)line.size();
    EXPECT_TRUE(parsed) << path << ": '" << line << "'";
    if (!parsed) continue;
    std::snprintf(check, sizeof check, "%d %.6f %.6f %.6f %.6f", b.cls, b.cx, b.cy, b.w, b.h);
    EXPECT_EQ(line, check) << path << ": not written with 6 decimals";
    boxes.push_back(b);
  }
  return boxes;
}

// The image's channels-median of the pixels of [x0, x1) x [y0, y1) whose mask is 0.
std::vector<int> detgen_median(const tvh::Image& img, const std::vector<uint8_t>& mask, int x0, int y0, int x1,
                               int y1) {
  std::vector<int> med(3, -1);
  for (int c = 0; c < 3; ++c) {
    std::vector<uint8_t> v;
    for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(img.width, x1); ++x)
        if (!mask[(size_t)y * img.width + x]) v.push_back(img.pixels[((size_t)y * img.width + x) * 3 + c]);
    if (v.empty()) return {};
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    med[c] = v[v.size() / 2];
  }
  return med;
}

// How many pixels of [x0, x1) x [y0, y1) differ from `bg` by more than 90 levels summed over the channels.
int detgen_ink_pixels(const tvh::Image& img, const std::vector<int>& bg, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(img.width, x1); ++x) {
      const uint8_t* p = &img.pixels[((size_t)y * img.width + x) * 3];
      n += std::abs(p[0] - bg[0]) + std::abs(p[1] - bg[1]) + std::abs(p[2] - bg[2]) > 90;
    }
  return n;
}

}  // namespace

TEST(DetectDataset, GeneratorReproducesCommittedDetect) {
  TV_REQUIRE_BINARY("tvgen-detect");
  const std::string out = tvtest::temp_dir("detgen") + "/detect";
  std::string err;
  ASSERT_EQ(tvtest::run_command(tvtest::tool_command("tvgen-detect") + " " + tvtest::quoted(out), nullptr, &err), 0)
      << err;
  const auto mine = detgen_files(out), committed = detgen_files(tvtest::source_path("datasets/detect"));
  ASSERT_EQ(mine.size(), committed.size());
  EXPECT_EQ(mine.size(), 1u + 2u * 1100u);  // data.yaml, 1,100 images and their labels
  for (const auto& kv : committed) {
    const auto it = mine.find(kv.first);
    ASSERT_NE(it, mine.end()) << kv.first;
    EXPECT_EQ(tvtest::read_text(it->second), tvtest::read_text(kv.second)) << kv.first;
  }
  // Nothing but the dataset beside it (the temporary folder was renamed).
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(out).parent_path()), fs::directory_iterator()), 1);
}

TEST(DetectDataset, CommittedLabelsAreWellFormed) {
  const std::string root = tvtest::source_path("datasets/detect");
  const std::string yaml = tvtest::read_text(root + "/data.yaml");
  for (const char* want : {"\npath: .\n", "\ntrain: images/train\n", "\nval: images/val\n", "\nnc: 3\n",
                           "\nnames: [ring, cross, triangle]\n"})
    EXPECT_TRUE(tvtest::contains(yaml, want)) << want << " missing from\n" << yaml;
  int images = 0, empty = 0, per_class[3] = {0, 0, 0};
  for (const char* split : {"train", "val"}) {
    const std::string dir = root + "/images/" + split;
    int in_split = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      ASSERT_EQ(e.path().extension(), ".jpg") << e.path();
      const std::string label = root + "/labels/" + split + "/" + e.path().stem().string() + ".txt";
      ASSERT_TRUE(fs::is_regular_file(label)) << label;
      const std::vector<DetgenBox> boxes = detgen_read_labels(label);
      EXPECT_LE(boxes.size(), 4u) << label;
      if (boxes.empty()) {
        EXPECT_EQ(fs::file_size(label), 0u) << label;
        ++empty;
      }
      for (const DetgenBox& b : boxes) {
        ASSERT_GE(b.cls, 0) << label;
        ASSERT_LT(b.cls, 3) << label;
        ++per_class[b.cls];
        EXPECT_GT(b.w, 0.0) << label;
        EXPECT_GT(b.h, 0.0) << label;
        EXPECT_GE(b.cx - b.w / 2, -1e-6) << label;
        EXPECT_GE(b.cy - b.h / 2, -1e-6) << label;
        EXPECT_LE(b.cx + b.w / 2, 1 + 1e-6) << label;
        EXPECT_LE(b.cy + b.h / 2, 1 + 1e-6) << label;
        EXPECT_LE(std::max(b.w, b.h), 0.30) << label;  // 10 to 22 % of the side, a little more when rotated
      }
      ++in_split;
      ++images;
    }
    const size_t labels = std::distance(fs::directory_iterator(root + "/labels/" + split), fs::directory_iterator());
    EXPECT_EQ(labels, (size_t)in_split) << split << ": a label file without its image";
    EXPECT_EQ(in_split, split[0] == 't' ? 1000 : 100);
  }
  // About 15 % of the images hold no object; every class is well represented.
  EXPECT_GE(empty, images / 20);
  EXPECT_LE(empty, images / 4);
  for (int c = 0; c < 3; ++c) EXPECT_GE(per_class[c], 600) << c;
}

// Labels are where the objects are: inside every box of the first training images a good share of the
// pixels are ink (far from the median colour of the band around the box), and far more than in windows of
// the same size elsewhere in the picture.
TEST(DetectDataset, LabelledBoxesHoldInk) {
  const std::string root = tvtest::source_path("datasets/detect");
  struct Px {
    int x0, y0, x1, y1;
  };
  int boxes_seen = 0, decoys_seen = 0;
  long long ink_inside = 0, area_inside = 0, ink_decoys = 0, area_decoys = 0;
  double least = 1.0;
  for (int k = 0; k < 40; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "img_%04d", k);
    const std::string jpg = root + "/images/train/" + name + ".jpg";
    const tvh::Image img = tvh::decode_jpeg(tvh::read_file(jpg), jpg, 3);
    ASSERT_EQ(img.channels, 3);
    const std::vector<DetgenBox> boxes = detgen_read_labels(root + "/labels/train/" + name + ".txt");
    // The boxes in pixels; the mask covers each grown by 2 and by 9 down-right, where its shadow falls.
    std::vector<uint8_t> mask((size_t)img.width * img.height, 0);
    std::vector<Px> px;
    for (const DetgenBox& b : boxes) {
      const Px p{(int)((b.cx - b.w / 2) * img.width), (int)((b.cy - b.h / 2) * img.height),
                 (int)std::ceil((b.cx + b.w / 2) * img.width), (int)std::ceil((b.cy + b.h / 2) * img.height)};
      px.push_back(p);
      for (int y = std::max(0, p.y0 - 2); y < std::min(img.height, p.y1 + 9); ++y)
        for (int x = std::max(0, p.x0 - 2); x < std::min(img.width, p.x1 + 9); ++x) mask[(size_t)y * img.width + x] = 1;
    }
    const auto ink_in = [&](const Px& p) {
      const std::vector<int> bg = detgen_median(img, mask, p.x0 - 12, p.y0 - 12, p.x1 + 12, p.y1 + 12);
      return bg.empty() ? -1 : detgen_ink_pixels(img, bg, p.x0, p.y0, p.x1, p.y1);
    };
    for (const Px& p : px) {
      const int area = (p.x1 - p.x0) * (p.y1 - p.y0);
      const int ink = ink_in(p);
      ASSERT_GE(ink, 0) << name << ": no background around a box";
      EXPECT_GE(ink, area / 6) << name << ": a labelled box with little ink";
      least = std::min(least, (double)ink / area);
      ink_inside += ink;
      area_inside += area;
      ++boxes_seen;
      // A decoy: the same window at the first place on a grid that meets no (grown) box.
      const int w = p.x1 - p.x0, h = p.y1 - p.y0;
      for (int y0 = 0, found = 0; !found && y0 + h <= img.height; y0 += 8)
        for (int x0 = 0; !found && x0 + w <= img.width; x0 += 8) {
          bool free = true;
          for (int y = y0; free && y < y0 + h; ++y)
            for (int x = x0; free && x < x0 + w; ++x) free = !mask[(size_t)y * img.width + x];
          if (!free) continue;
          found = 1;
          const int decoy = ink_in(Px{x0, y0, x0 + w, y0 + h});
          if (decoy < 0) continue;
          ink_decoys += decoy;
          area_decoys += area;
          ++decoys_seen;
        }
    }
  }
  EXPECT_GE(boxes_seen, 60);
  EXPECT_GE(decoys_seen, 30);
  const double inside = (double)ink_inside / area_inside, decoys = (double)ink_decoys / area_decoys;
  EXPECT_GT(inside, 5 * decoys) << "ink inside the boxes " << inside << ", in decoy windows " << decoys;
  std::printf("%d boxes: ink %.3f of their pixels (least %.3f); %d decoy windows: %.4f\n", boxes_seen, inside, least,
              decoys_seen, decoys);
}

TEST(DetectDataset, StyleBKeepsTheLayoutAndTheClassesWithOtherPictures) {
  TV_REQUIRE_BINARY("tvgen-detect");
  const std::string parent = tvtest::temp_dir("detgen-b");
  std::string err;
  ASSERT_EQ(tvtest::run_command(tvtest::tool_command("tvgen-detect") + " " + tvtest::quoted(parent + "/a") +
                                    " --train 6 --val 2 --size 96",
                                nullptr, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(tvtest::tool_command("tvgen-detect") + " " + tvtest::quoted(parent + "/b") +
                                    " --train 6 --val 2 --size 96 --style b",
                                nullptr, &err),
            0)
      << err;
  const auto a = detgen_files(parent + "/a"), b = detgen_files(parent + "/b");
  ASSERT_EQ(a.size(), 17u);
  ASSERT_EQ(b.size(), a.size());
  for (const auto& kv : a) {
    ASSERT_TRUE(b.count(kv.first)) << kv.first;
    if (kv.first.rfind("images/", 0) == 0) {
      EXPECT_NE(tvtest::read_text(kv.second), tvtest::read_text(b.at(kv.first))) << kv.first;
      EXPECT_EQ(tvh::decode_jpeg(tvh::read_file(b.at(kv.first)), kv.first, 3).width, 96);
    }
    if (kv.first.rfind("labels/", 0) == 0) detgen_read_labels(b.at(kv.first));
  }
  const std::string yaml_b = tvtest::read_text(parent + "/b/data.yaml");
  EXPECT_TRUE(tvtest::contains(yaml_b, "\nnames: [ring, cross, triangle]\n")) << yaml_b;
}

TEST(DetectDataset, RefusesAnExistingFolderAndLeavesNothing) {
  TV_REQUIRE_BINARY("tvgen-detect");
  const std::string out = tvtest::temp_dir("detgen-exists");
  tvh::write_file_atomic(out + "/mine.txt", std::string("keep me"));
  std::string err;
  EXPECT_EQ(tvtest::run_command(tvtest::tool_command("tvgen-detect") + " " + tvtest::quoted(out), nullptr, &err), 1);
  EXPECT_TRUE(tvtest::contains(err, "already exists")) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(detgen_files(out).size(), 1u);
  // A folder whose parent is missing is refused too, and nothing is created.
  EXPECT_NE(
      tvtest::run_command(tvtest::tool_command("tvgen-detect") + " " + tvtest::quoted(out + "/no/such"), nullptr, &err),
      0);
  EXPECT_FALSE(fs::exists(out + "/no"));
}
