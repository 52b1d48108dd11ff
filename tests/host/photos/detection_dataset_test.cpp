// Detection datasets read from real folders and zips: the Ultralytics, flat and Roboflow YOLO layouts,
// COCO and Pascal VOC, the photos and label files left out and why, EXIF orientation, the whole-photo
// resize, and the per-image split.
#include "host/photos/detection_dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "detection_fixture.h"
#include "host/base/error.h"
#include "host/photos/image.h"
#include "host/photos/split.h"
#include "photo_fixture.h"
#include "test_support.h"
#include "tv/image/image.h"

namespace {

using dettest::bytes_of;
using dettest::Files;

// The skipped file whose path ends with `tail` (nullptr when none).
const tvh::SkippedFile* skipped_ending(const tvh::DetectionDataset& ds, const std::string& tail) {
  for (const auto& s : ds.skipped) {
    if (s.path.size() >= tail.size() && s.path.compare(s.path.size() - tail.size(), tail.size(), tail) == 0) return &s;
  }
  return nullptr;
}

// Image index of the path ending with `tail` (-1 when none).
int image_ending(const tvh::DetectionDataset& ds, const std::string& tail) {
  for (size_t i = 0; i < ds.paths.size(); ++i) {
    const std::string& p = ds.paths[i];
    if (p.size() >= tail.size() && p.compare(p.size() - tail.size(), tail.size(), tail) == 0) return (int)i;
  }
  return -1;
}

}  // namespace

TEST(DetectionDataset, UltralyticsLayoutWithTrainAndValAsGiven) {
  const std::string root = dettest::write_folder(dettest::ultralytics_files());
  EXPECT_EQ(tvh::detection_format(root), tvh::DetectionFormat::Yolo);
  const tvh::DetectionDataset ds = dettest::load_detection(root, 12, 16);
  EXPECT_EQ(ds.format, "yolo");
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds.object_count(), 4u);
  EXPECT_EQ(ds.pixels.size(), 3u * 12 * 16 * 3);
  const int a = image_ending(ds, "images/train/a.jpg"), c = image_ending(ds, "images/val/c.jpg");
  ASSERT_GE(a, 0);
  ASSERT_GE(c, 0);
  EXPECT_EQ(ds.subsets[(size_t)a], "train");
  EXPECT_EQ(ds.subsets[(size_t)c], "val");
  ASSERT_EQ(ds.boxes[(size_t)a].size(), 2u);
  EXPECT_EQ(ds.boxes[(size_t)a][1].label, 1);
  EXPECT_FLOAT_EQ(ds.boxes[(size_t)a][1].cx, 0.25f);
  EXPECT_EQ(ds.photo_width[(size_t)a], 40);
  EXPECT_EQ(ds.photo_height[(size_t)a], 30);
  EXPECT_EQ(ds.photo_width[(size_t)c], 24);
  const tvh::Split split = tvh::detection_split(ds, 0.2, 1);
  EXPECT_EQ(split.train.size(), 2u);
  ASSERT_EQ(split.val.size(), 1u);
  EXPECT_EQ(split.val[0], c);
}

TEST(DetectionDataset, FlatYoloWithClassesTxtReportsPhotosAndLabelsLeftOut) {
  Files f;
  f["classes.txt"] = bytes_of("cat\ndog\n");
  f["images/a.jpg"] = dettest::jpeg_photo(20, 20, 1);
  f["labels/a.txt"] = bytes_of("1 0.5 0.5 0.5 0.5\n");
  f["images/empty.jpg"] = dettest::jpeg_photo(20, 20, 2);
  f["labels/empty.txt"] = {};
  f["images/unlabelled.jpg"] = dettest::jpeg_photo(20, 20, 3);
  f["labels/orphan.txt"] = bytes_of("0 0.5 0.5 0.5 0.5\n");
  f["images/bad.jpg"] = dettest::jpeg_photo(20, 20, 4);
  f["labels/bad.txt"] = bytes_of("0 0.5 0.5 0.5 0.5\n5 0.5 0.5 0.1 0.1\n");
  f["images/photo.heic"] = bytes_of("not read");
  f["images/notes.txt"] = bytes_of("a note");
  const std::string root = dettest::write_folder(f);
  const tvh::DetectionDataset ds = dettest::load_detection(root);
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(ds.size(), 2u);  // a.jpg, and empty.jpg: a photo with no objects
  const int empty = image_ending(ds, "images/empty.jpg");
  ASSERT_GE(empty, 0);
  EXPECT_TRUE(ds.boxes[(size_t)empty].empty());
  EXPECT_EQ(ds.subsets[(size_t)empty], "");
  const tvh::SkippedFile* unlabelled = skipped_ending(ds, "images/unlabelled.jpg");
  ASSERT_NE(unlabelled, nullptr);
  EXPECT_EQ(unlabelled->reason, "no_label");
  EXPECT_TRUE(tvtest::contains(unlabelled->message, "labels/unlabelled.txt")) << unlabelled->message;
  const tvh::SkippedFile* orphan = skipped_ending(ds, "labels/orphan.txt");
  ASSERT_NE(orphan, nullptr);
  EXPECT_EQ(orphan->reason, "no_image");
  const tvh::SkippedFile* bad = skipped_ending(ds, "labels/bad.txt");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->reason, "bad_label");
  EXPECT_TRUE(tvtest::contains(bad->message, root + "/labels/bad.txt' line 2")) << bad->message;
  EXPECT_TRUE(tvtest::contains(bad->message, "class 5 is not one of the 2 class names")) << bad->message;
  const tvh::SkippedFile* heic = skipped_ending(ds, "images/photo.heic");
  ASSERT_NE(heic, nullptr);
  EXPECT_EQ(heic->reason, "unsupported_format");
  const tvh::SkippedFile* notes = skipped_ending(ds, "images/notes.txt");
  ASSERT_NE(notes, nullptr);
  EXPECT_EQ(notes->reason, "not_an_image");

  tvh::DetectionOptions keep;
  keep.path = root;
  keep.height = keep.width = 8;
  keep.keep_unlabelled = true;
  const tvh::DetectionDataset kept = tvh::load_detection_dataset(keep);
  ASSERT_EQ(kept.size(), 3u);
  const int u = image_ending(kept, "images/unlabelled.jpg");
  ASSERT_GE(u, 0);
  EXPECT_TRUE(kept.boxes[(size_t)u].empty());
  EXPECT_EQ(skipped_ending(kept, "images/unlabelled.jpg"), nullptr);
  ASSERT_EQ(kept.warnings.size(), 1u);
  EXPECT_TRUE(tvtest::contains(kept.warnings[0], "1 photo(s) without a label file are kept")) << kept.warnings[0];
}

TEST(DetectionDataset, YoloWithoutClassNamesIsRefused) {
  Files f;
  f["images/a.jpg"] = dettest::jpeg_photo(20, 20, 1);
  f["labels/a.txt"] = bytes_of("0 0.5 0.5 0.5 0.5\n");
  const std::string root = dettest::write_folder(f);
  EXPECT_TRUE(tvh::looks_like_detection_dataset(root));
  try {
    dettest::load_detection(root);
    FAIL() << "a YOLO dataset without class names was read";
  } catch (const tvh::Error& e) {
    EXPECT_TRUE(tvtest::contains(e.what(), "no data.yaml or classes.txt")) << e.what();
  }
}

TEST(DetectionDataset, RoboflowYoloZipInOneTopFolder) {
  Files f;
  f["project/data.yaml"] = bytes_of(
      "train: ../train/images\nval: ../valid/images\ntest: ../test/images\n\nnc: 2\nnames: ['car', 'person']\n\n"
      "roboflow:\n  workspace: w\n  project: p\n  version: 1\n");
  f["project/README.roboflow.txt"] = bytes_of("exported\n");
  f["project/train/images/a_jpg.rf.1.jpg"] = dettest::jpeg_photo(32, 32, 1);
  f["project/train/labels/a_jpg.rf.1.txt"] = bytes_of("0 0.5 0.5 0.25 0.25\n1 0.2 0.2 0.1 0.1\n");
  f["project/train/images/b_jpg.rf.2.jpg"] = dettest::jpeg_photo(32, 32, 2);
  f["project/train/labels/b_jpg.rf.2.txt"] = bytes_of("1 0.5 0.5 0.25 0.25\n");
  f["project/valid/images/c_jpg.rf.3.jpg"] = dettest::jpeg_photo(32, 32, 3);
  f["project/valid/labels/c_jpg.rf.3.txt"] = bytes_of("0 0.5 0.5 0.25 0.25\n");
  f["project/test/images/d_jpg.rf.4.jpg"] = dettest::jpeg_photo(32, 32, 4);
  f["project/test/labels/d_jpg.rf.4.txt"] = bytes_of("");
  const std::string zip = dettest::write_zip(f);
  EXPECT_EQ(tvh::detection_format(zip), tvh::DetectionFormat::Yolo);
  const tvh::DetectionDataset ds = dettest::load_detection(zip);
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"car", "person"}));
  ASSERT_EQ(ds.size(), 4u);
  EXPECT_EQ(ds.subset_count("train"), 2u);
  EXPECT_EQ(ds.subset_count("val"), 1u);
  EXPECT_EQ(ds.subset_count("test"), 1u);
  EXPECT_EQ(ds.object_count(), 4u);
  EXPECT_TRUE(ds.warnings.empty()) << ds.warnings[0];
  EXPECT_TRUE(tvtest::contains(ds.paths[0], zip + ":project/")) << ds.paths[0];
  const tvh::Split split = tvh::detection_split(ds, 0.2, 1);
  EXPECT_EQ(split.train.size(), 2u);
  EXPECT_EQ(split.val.size(), 1u);  // the test photo is in neither
}

TEST(DetectionDataset, CvatYolo11WithObjNamesAndLabelsBesideThePhotos) {
  Files f;
  f["obj.names"] = bytes_of("plate\ncup\n");
  f["obj.data"] = bytes_of("classes = 2\ntrain = data/train.txt\nnames = data/obj.names\n");
  f["train.txt"] = bytes_of("data/obj_train_data/a.jpg\n");
  f["obj_train_data/a.jpg"] = dettest::jpeg_photo(20, 20, 1);
  f["obj_train_data/a.txt"] = bytes_of("1 0.5 0.5 0.5 0.5\n");
  const std::string zip = dettest::write_zip(f);
  EXPECT_EQ(tvh::detection_format(zip), tvh::DetectionFormat::Yolo);
  const tvh::DetectionDataset ds = dettest::load_detection(zip);
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"plate", "cup"}));
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_EQ(ds.boxes[0].size(), 1u);
  EXPECT_EQ(ds.boxes[0][0].label, 1);
}

TEST(DetectionDataset, RoboflowCocoLayoutDropsTheSupercategory) {
  const std::string coco = R"({"categories": [
      {"id": 0, "name": "pets", "supercategory": "none"},
      {"id": 1, "name": "cat", "supercategory": "pets"},
      {"id": 2, "name": "dog", "supercategory": "pets"}],
    "images": [{"id": 0, "file_name": "IMG.jpg", "width": 40, "height": 20}],
    "annotations": [{"id": 0, "image_id": 0, "category_id": 2, "bbox": [10, 5, 20, 10], "iscrowd": 0}]})";
  std::string valid = coco;
  valid.replace(valid.find("IMG.jpg"), 7, "v.jpg");
  Files f;
  f["train/_annotations.coco.json"] = bytes_of(coco);
  f["train/IMG.jpg"] = dettest::jpeg_photo(40, 20, 1);
  f["valid/_annotations.coco.json"] = bytes_of(valid);
  f["valid/v.jpg"] = dettest::jpeg_photo(40, 20, 2);
  f["valid/stray.jpg"] = dettest::jpeg_photo(40, 20, 3);
  const std::string root = dettest::write_folder(f);
  EXPECT_EQ(tvh::detection_format(root), tvh::DetectionFormat::Coco);
  const tvh::DetectionDataset ds = dettest::load_detection(root);
  EXPECT_EQ(ds.format, "coco");
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds.subsets[0], "train");
  EXPECT_EQ(ds.subsets[1], "val");
  ASSERT_EQ(ds.boxes[0].size(), 1u);
  EXPECT_EQ(ds.boxes[0][0].label, 1);
  EXPECT_FLOAT_EQ(ds.boxes[0][0].cx, 0.5f);
  const tvh::SkippedFile* stray = skipped_ending(ds, "valid/stray.jpg");
  ASSERT_NE(stray, nullptr);
  EXPECT_EQ(stray->reason, "no_label");
}

TEST(DetectionDataset, CocoSizeThatIsNotThePhotosIsNamed) {
  Files f;
  f["annotations.json"] = bytes_of(R"({"categories": [{"id": 1, "name": "cat"}],
    "images": [{"id": 1, "file_name": "a.jpg", "width": 40, "height": 20},
               {"id": 2, "file_name": "b.jpg", "width": 30, "height": 30}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 5, 5]}]})");
  f["images/a.jpg"] = dettest::jpeg_photo(40, 20, 1);
  f["images/b.jpg"] = dettest::jpeg_photo(32, 30, 2);
  const std::string root = dettest::write_folder(f);
  const tvh::DetectionDataset ds = dettest::load_detection(root);
  ASSERT_EQ(ds.size(), 1u);
  const tvh::SkippedFile* b = skipped_ending(ds, "images/b.jpg");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->reason, "size_mismatch");
  EXPECT_TRUE(tvtest::contains(b->message, "is 32x30 pixels but '" + root + "/annotations.json' gives it as 30x30"))
      << b->message;
}

TEST(DetectionDataset, VocAnnotationsBesideThePhotosWithSortedClasses) {
  auto voc = [](const std::string& file, const std::string& objects) {
    return bytes_of("<annotation><filename>" + file + "</filename><size><width>40</width><height>20</height></size>" +
                    objects + "</annotation>");
  };
  const std::string dog =
      "<object><name>dog</name><bndbox><xmin>10</xmin><ymin>5</ymin><xmax>30</xmax>"
      "<ymax>15</ymax></bndbox></object>";
  const std::string ant =
      "<object><name>ant</name><bndbox><xmin>0</xmin><ymin>0</ymin><xmax>4</xmax>"
      "<ymax>4</ymax></bndbox></object>";
  Files f;
  f["VOC/Annotations/a.xml"] = voc("a.jpg", dog + ant);
  f["VOC/JPEGImages/a.jpg"] = dettest::jpeg_photo(40, 20, 1);
  f["VOC/Annotations/b.xml"] = voc("b.jpg", dog);
  f["VOC/JPEGImages/b.jpg"] = dettest::jpeg_photo(40, 20, 2);
  f["VOC/Annotations/c.xml"] = voc("c.jpg",
                                   "<object><name>dog</name><bndbox><xmin>0</xmin><ymin>0</ymin>"
                                   "<xmax>90</xmax><ymax>4</ymax></bndbox></object>");
  f["VOC/JPEGImages/c.jpg"] = dettest::jpeg_photo(40, 20, 3);
  const std::string zip = dettest::write_zip(f);
  EXPECT_EQ(tvh::detection_format(zip), tvh::DetectionFormat::Voc);
  const tvh::DetectionDataset ds = dettest::load_detection(zip);
  EXPECT_EQ(ds.format, "voc");
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"ant", "dog"}));
  ASSERT_EQ(ds.size(), 2u);
  ASSERT_EQ(ds.boxes[0].size(), 2u);
  EXPECT_EQ(ds.boxes[0][0].label, 1);
  EXPECT_FLOAT_EQ(ds.boxes[0][0].w, 0.5f);
  EXPECT_EQ(ds.boxes[0][1].label, 0);
  const tvh::SkippedFile* c = skipped_ending(ds, "Annotations/c.xml");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason, "bad_label");
  EXPECT_TRUE(tvtest::contains(c->message, "object 1 ('dog'")) << c->message;
}

TEST(DetectionDataset, ExifRotatedPhotosBoxesTurnWithThePixels) {
  Files f = dettest::ultralytics_files();
  // Stored 40 wide and 20 high, orientation 6: the upright photo is 20 wide and 40 high.
  f["images/train/r.jpg"] = tvtest::with_exif_orientation(dettest::jpeg_photo(40, 20, 5), 6);
  f["labels/train/r.txt"] = bytes_of("1 0.25 0.5 0.1 0.2\n");
  const tvh::DetectionDataset ds = dettest::load_detection(dettest::write_folder(f));
  const int r = image_ending(ds, "images/train/r.jpg");
  ASSERT_GE(r, 0);
  EXPECT_EQ(ds.photo_width[(size_t)r], 20);
  EXPECT_EQ(ds.photo_height[(size_t)r], 40);
  ASSERT_EQ(ds.boxes[(size_t)r].size(), 1u);
  const tvh::DetectionBox stored{1, 0.25f, 0.5f, 0.1f, 0.2f};  // label, cx, cy, w, h as r.txt gives them
  const tvh::DetectionBox want = tvh::orient_box(stored, 6);
  const tvh::DetectionBox& got = ds.boxes[(size_t)r][0];
  EXPECT_FLOAT_EQ(got.cx, want.cx);
  EXPECT_FLOAT_EQ(got.cy, want.cy);
  EXPECT_FLOAT_EQ(got.w, want.w);
  EXPECT_FLOAT_EQ(got.h, want.h);
  EXPECT_FLOAT_EQ(got.w, 0.2f);  // the stored height fraction becomes the upright width fraction
  EXPECT_EQ(ds.exif_rotated, 1u);
}

TEST(DetectionDataset, TheWholePhotoIsStretchedNeverCropped) {
  // 40 x 20, white in its left quarter: a centre crop (x 10..30) would show none of it.
  std::vector<uint8_t> rgb((size_t)40 * 20 * 3, 0);
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 10; ++x)
      for (int c = 0; c < 3; ++c) rgb[((size_t)y * 40 + x) * 3 + c] = 255;
  Files f = dettest::ultralytics_files();
  f["images/train/wide.png"] = tvtest::encode_png(tvtest::to_rgba(rgb, 40, 20), 40, 20, tvtest::PngKind::Rgb, 8);
  f["labels/train/wide.txt"] = bytes_of("0 0.125 0.5 0.25 1\n");
  const tvh::DetectionDataset ds = dettest::load_detection(dettest::write_folder(f), 8, 8);
  const int i = image_ending(ds, "images/train/wide.png");
  ASSERT_GE(i, 0);
  std::vector<uint8_t> want((size_t)8 * 8 * 3);
  std::vector<uint16_t> lut(16);
  ASSERT_TRUE(tv::resize_nearest(rgb.data(), 40, 20, 3, want.data(), 8, 8, tv::ChannelOrder::RGB, lut.data()));
  EXPECT_EQ(std::vector<uint8_t>(ds.image((size_t)i), ds.image((size_t)i) + ds.image_bytes()), want);
  for (int y = 0; y < 8; ++y) {
    EXPECT_EQ(ds.image((size_t)i)[(y * 8 + 1) * 3], 255);  // the white quarter is the first two columns
    EXPECT_EQ(ds.image((size_t)i)[(y * 8 + 2) * 3], 0);
  }
}

TEST(DetectionDataset, PerImageSplitIsSeededAndDeterministic) {
  Files f;
  f["classes.txt"] = bytes_of("cat\n");
  for (int k = 0; k < 20; ++k) {
    f["images/p" + std::to_string(k) + ".jpg"] = dettest::jpeg_photo(16, 16, k);
    f["labels/p" + std::to_string(k) + ".txt"] = bytes_of("0 0.5 0.5 0.5 0.5\n");
  }
  const tvh::DetectionDataset ds = dettest::load_detection(dettest::write_folder(f), 8, 8);
  ASSERT_EQ(ds.size(), 20u);
  const tvh::Split a = tvh::detection_split(ds, 0.2, 7), b = tvh::detection_split(ds, 0.2, 7);
  const tvh::Split other = tvh::detection_split(ds, 0.2, 8);
  EXPECT_EQ(a.val.size(), 4u);
  EXPECT_EQ(a.train.size(), 16u);
  EXPECT_EQ(a.val, b.val);
  EXPECT_EQ(a.train, b.train);
  EXPECT_NE(a.val, other.val);
  EXPECT_THROW(tvh::detection_split(ds, 1.0, 7), tvh::Error);
}

TEST(DetectionDataset, ClassificationFoldersAreNoDetectionDataset) {
  Files f;
  f["cat/a.jpg"] = dettest::jpeg_photo(16, 16, 1);
  f["dog/b.jpg"] = dettest::jpeg_photo(16, 16, 2);
  f["dog/notes.txt"] = bytes_of("a note\n");
  f["images/x.jpg"] = dettest::jpeg_photo(16, 16, 3);
  EXPECT_FALSE(tvh::looks_like_detection_dataset(dettest::write_folder(f)));
  EXPECT_FALSE(tvh::looks_like_detection_dataset(dettest::write_zip(f)));
  EXPECT_FALSE(tvh::looks_like_detection_dataset("/nonexistent/dataset"));
  EXPECT_TRUE(tvh::looks_like_detection_dataset(dettest::write_zip(dettest::ultralytics_files())));
}

TEST(DetectionDataset, MoreThanSixteenClassesAreRefused) {
  Files f = dettest::ultralytics_files();
  std::string names = "names: [";
  for (int k = 0; k < 17; ++k) names += (k ? ", c" : "c") + std::to_string(k);
  f["data.yaml"] = bytes_of(names + "]\n");
  try {
    dettest::load_detection(dettest::write_folder(f));
    FAIL() << "17 classes were read";
  } catch (const tvh::Error& e) {
    EXPECT_TRUE(tvtest::contains(e.what(), "data.yaml' names 17 object classes; the board keeps at most 16"))
        << e.what();
  }
}

TEST(DetectionDataset, TheProjectsOwnDetectDatasetIsReadWhole) {
  // datasets/detect (tvgen-detect): Ultralytics layout, 1,000 train + 100 val photos, data.yaml with 3 names.
  const std::string root = tvtest::source_path("datasets/detect");
  size_t lines = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root + "/labels")) {
    if (!e.is_regular_file()) continue;
    for (const char ch : tvtest::read_text(e.path().string())) lines += ch == '\n' ? 1 : 0;
  }
  const tvh::DetectionDataset ds = dettest::load_detection(root, 32, 32);
  EXPECT_EQ(ds.format, "yolo");
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"ring", "cross", "triangle"}));
  EXPECT_EQ(ds.size(), 1100u);
  EXPECT_EQ(ds.subset_count("train"), 1000u);
  EXPECT_EQ(ds.subset_count("val"), 100u);
  EXPECT_EQ(ds.object_count(), lines);
  EXPECT_TRUE(ds.skipped.empty()) << ds.skipped[0].message;
  EXPECT_TRUE(ds.warnings.empty()) << ds.warnings[0];
  EXPECT_EQ(ds.photo_width[0], 160);
}
