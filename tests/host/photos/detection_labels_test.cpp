// The detection label parsers on real file texts: YOLO .txt, data.yaml, classes.txt, COCO JSON, Pascal
// VOC XML, and the class-name limits. Every refusal names the file and the line or entry.
#include "host/photos/detection_labels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/base/error.h"
#include "test_support.h"

TEST(DetectionLabels, YoloReadsBoxesSkipsBlankLinesAndAnEmptyFileHasNoObjects) {
  const auto boxes = tvh::parse_yolo_labels("0 0.5 0.5 0.2 0.4\n\n  \r\n2 0.25 0.75 0.1 0.1\r\n", "a.txt", 3);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].label, 0);
  EXPECT_FLOAT_EQ(boxes[0].cx, 0.5f);
  EXPECT_FLOAT_EQ(boxes[0].h, 0.4f);
  EXPECT_EQ(boxes[1].label, 2);
  EXPECT_FLOAT_EQ(boxes[1].cy, 0.75f);
  EXPECT_TRUE(tvh::parse_yolo_labels("", "empty.txt", 3).empty());
  EXPECT_TRUE(tvh::parse_yolo_labels("\n\n", "blank.txt", 3).empty());
}

TEST(DetectionLabels, YoloRefusesEachProblemNamingTheFileAndLine) {
  const struct {
    const char* line;
    const char* says;
  } cases[] = {
      {"x 0.5 0.5 0.2 0.2", "not a whole number"},
      {"1.5 0.5 0.5 0.2 0.2", "not a whole number"},
      {"3 0.5 0.5 0.2 0.2", "not one of the 3 class names"},
      {"-1 0.5 0.5 0.2 0.2", "not one of the 3 class names"},
      {"0 nan 0.5 0.2 0.2", "not a finite number"},
      {"0 0.5 inf 0.2 0.2", "not a finite number"},
      {"0 0.5 0.5 abc 0.2", "not a finite number"},
      {"0 1.5 0.5 0.2 0.2", "outside 0..1"},
      {"0 0.5 -0.1 0.2 0.2", "outside 0..1"},
      {"0 0.5 0.5 0 0.2", "not in (0, 1]"},
      {"0 0.5 0.5 0.2 1.2", "not in (0, 1]"},
      {"0 0.95 0.5 0.2 0.2", "reaches past the photo's edge"},
      {"0 0.5 0.5 0.2", "4 fields where a YOLO box has 5"},
      {"0 0.5 0.5 0.2 0.2 0.9", "6 fields where a YOLO box has 5"},
      {"0 0.1 0.1 0.5 0.1 0.5 0.5", "segmentation label"},
  };
  for (const auto& c : cases) {
    const std::string text = std::string("1 0.5 0.5 0.1 0.1\n") + c.line + "\n";
    const std::string why = tvtest::thrown_message([&] { tvh::parse_yolo_labels(text, "labels/train/a.txt", 3); });
    EXPECT_TRUE(tvtest::contains(why, "'labels/train/a.txt' line 2")) << c.line << ": " << why;
    EXPECT_TRUE(tvtest::contains(why, c.says)) << c.line << ": " << why;
  }
}

TEST(DetectionLabels, YoloClipsAnOvershootWithinTheTolerance) {
  // 0.9 + 0.21 / 2 = 1.005: within kBoxEdgeTolerance, clipped to the edge
  const auto boxes = tvh::parse_yolo_labels("0 0.9 0.5 0.21 0.2\n", "a.txt", 1);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_NEAR(boxes[0].cx + boxes[0].w / 2, 1.0f, 1e-6f);
  EXPECT_NEAR(boxes[0].w, 0.205f, 1e-6f);
}

TEST(DetectionLabels, DataYamlNamesAsListOrMapWithNcAndPaths) {
  const tvh::DataYaml list = tvh::parse_data_yaml(
      "train: ../train/images\nval: ../valid/images\ntest: ../test/images\nnc: 2\nnames: ['cat', 'dog']\n",
      "data.yaml");
  EXPECT_EQ(list.names, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(list.train.size(), 1u);
  EXPECT_EQ(list.train[0], "../train/images");
  EXPECT_EQ(list.val[0], "../valid/images");
  const tvh::DataYaml map =
      tvh::parse_data_yaml("path: ds\ntrain: [images/a, images/b]\nnames:\n  1: dog\n  0: cat\n", "data.yaml");
  EXPECT_EQ(map.names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(map.path, "ds");
  EXPECT_EQ(map.train.size(), 2u);
  EXPECT_TRUE(map.val.empty());
  EXPECT_TRUE(tvtest::contains(tvtest::thrown_message([] { tvh::parse_data_yaml("nc: 3\nnames: [a, b]\n", "d.yaml"); }),
                               "nc: 3 but names 2 classes"));
  EXPECT_TRUE(
      tvtest::contains(tvtest::thrown_message([] { tvh::parse_data_yaml("train: x\n", "d.yaml"); }), "no `names:`"));
  EXPECT_TRUE(tvtest::contains(
      tvtest::thrown_message([] { tvh::parse_data_yaml("names:\n  0: a\n  2: c\n", "d.yaml"); }), "no class 1"));
  EXPECT_TRUE(tvtest::contains(tvtest::thrown_message([] { tvh::parse_data_yaml("names: [a\nnc: ]]\n", "d.yaml"); }),
                               "'d.yaml' line"));
}

TEST(DetectionLabels, ClassesTxtOneNamePerLine) {
  EXPECT_EQ(tvh::parse_class_names("cat\r\n dog \nbird\n\n", "classes.txt"),
            (std::vector<std::string>{"cat", "dog", "bird"}));
  const std::string why = tvtest::thrown_message([] { tvh::parse_class_names("cat\n\ndog\n", "classes.txt"); });
  EXPECT_TRUE(tvtest::contains(why, "'classes.txt' line 2")) << why;
}

TEST(DetectionLabels, ClassNamesFollowTheBoardsRules) {
  EXPECT_NO_THROW(tvh::check_detection_classes({"cat", "dog"}, "data.yaml"));
  std::vector<std::string> many;
  for (int i = 0; i < 17; ++i) many.push_back("c" + std::to_string(i));
  EXPECT_TRUE(
      tvtest::contains(tvtest::thrown_message([&] { tvh::check_detection_classes(many, "data.yaml"); }), "at most 16"));
  EXPECT_TRUE(tvtest::contains(tvtest::thrown_message([] { tvh::check_detection_classes({"a/b"}, "data.yaml"); }),
                               "cannot name a class"));
  EXPECT_TRUE(tvtest::contains(tvtest::thrown_message([] {
                                 tvh::check_detection_classes({"a", "a"}, "data.yaml");
                               }),
                               "twice"));
  EXPECT_TRUE(tvtest::contains(tvtest::thrown_message([] { tvh::check_detection_classes({}, "data.yaml"); }),
                               "no object class"));
}

// A Roboflow COCO export: category 0 is the dataset's name, the parent of the others, used by no annotation.
const char* const kRoboflowCoco = R"({
  "info": {"description": "cells"},
  "categories": [
    {"id": 0, "name": "cells", "supercategory": "none"},
    {"id": 1, "name": "rbc", "supercategory": "cells"},
    {"id": 2, "name": "wbc", "supercategory": "cells"}],
  "images": [
    {"id": 0, "file_name": "a.jpg", "width": 40, "height": 20},
    {"id": 1, "file_name": "b.jpg", "width": 10, "height": 10}],
  "annotations": [
    {"id": 0, "image_id": 0, "category_id": 2, "bbox": [10, 5, 20, 10], "area": 200, "iscrowd": 0},
    {"id": 1, "image_id": 0, "category_id": 1, "bbox": [0, 0, 4, 2], "area": 8, "iscrowd": 0},
    {"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 1}]
})";

TEST(DetectionLabels, CocoRoboflowCategoryZeroIsNotAClass) {
  const tvh::CocoLabels coco = tvh::parse_coco_json(kRoboflowCoco, "_annotations.coco.json");
  EXPECT_EQ(coco.classes, (std::vector<std::string>{"rbc", "wbc"}));
  ASSERT_EQ(coco.images.size(), 2u);
  EXPECT_EQ(coco.images[0].file_name, "a.jpg");
  EXPECT_EQ(coco.images[0].width, 40);
  ASSERT_EQ(coco.images[0].boxes.size(), 2u);
  const tvh::DetectionBox& b = coco.images[0].boxes[0];
  EXPECT_EQ(b.label, 1);  // wbc: category 2 is the second class
  EXPECT_FLOAT_EQ(b.cx, 0.5f);
  EXPECT_FLOAT_EQ(b.cy, 0.5f);
  EXPECT_FLOAT_EQ(b.w, 0.5f);
  EXPECT_FLOAT_EQ(b.h, 0.5f);
  EXPECT_EQ(coco.images[0].boxes[1].label, 0);
  EXPECT_TRUE(coco.images[1].boxes.empty());  // the crowd annotation is left out, with a warning
  ASSERT_EQ(coco.warnings.size(), 1u);
  EXPECT_TRUE(tvtest::contains(coco.warnings[0], "crowd"));
  EXPECT_TRUE(tvh::is_coco_json(kRoboflowCoco));
  EXPECT_FALSE(tvh::is_coco_json("{\"images\": []}"));
}

TEST(DetectionLabels, CocoRefusesBrokenEntriesNamingThem) {
  std::string text = kRoboflowCoco;
  text.replace(text.find("[10, 5, 20, 10]"), 15, "[30, 5, 20, 10]");
  std::string why = tvtest::thrown_message([&] { tvh::parse_coco_json(text, "ann.json"); });
  EXPECT_TRUE(tvtest::contains(why, "'ann.json': annotation 1 (id 0) of 'a.jpg'")) << why;
  EXPECT_TRUE(tvtest::contains(why, "reaches past the photo's edge")) << why;
  text = kRoboflowCoco;
  text.replace(text.find("\"category_id\": 2"), 16, "\"category_id\": 7");
  why = tvtest::thrown_message([&] { tvh::parse_coco_json(text, "ann.json"); });
  EXPECT_TRUE(tvtest::contains(why, "category_id 7")) << why;
  why = tvtest::thrown_message([] { tvh::parse_coco_json("{\"images\": [", "ann.json"); });
  EXPECT_TRUE(tvtest::contains(why, "'ann.json' is not valid JSON")) << why;
}

const char* const kVocXml = R"(<annotation>
  <folder>images</folder><filename>a.jpg</filename>
  <size><width>40</width><height>20</height><depth>3</depth></size>
  <object><name>dog</name><difficult>0</difficult>
    <bndbox><xmin>10</xmin><ymin>5</ymin><xmax>30</xmax><ymax>15</ymax></bndbox></object>
  <object><name>cat</name><bndbox><xmin>0</xmin><ymin>0</ymin><xmax>4.5</xmax><ymax>2</ymax></bndbox></object>
</annotation>)";

TEST(DetectionLabels, VocReadsObjectsAsPixelEdges) {
  const tvh::VocAnnotation voc = tvh::parse_voc_xml(kVocXml, "a.xml");
  EXPECT_EQ(voc.filename, "a.jpg");
  EXPECT_EQ(voc.width, 40);
  ASSERT_EQ(voc.objects.size(), 2u);
  const auto boxes = tvh::voc_boxes(voc, {"cat", "dog"}, "a.xml");
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].label, 1);
  EXPECT_FLOAT_EQ(boxes[0].cx, 0.5f);
  EXPECT_FLOAT_EQ(boxes[0].w, 0.5f);
  EXPECT_FLOAT_EQ(boxes[1].w, 4.5f / 40);
  EXPECT_TRUE(tvh::is_voc_xml(kVocXml));
  EXPECT_FALSE(tvh::is_voc_xml("<config/>"));
  std::string broken = kVocXml;
  broken.replace(broken.find("<xmax>30</xmax>"), 15, "<xmax>3x</xmax>");
  const std::string why = tvtest::thrown_message([&] { tvh::parse_voc_xml(broken, "Annotations/a.xml"); });
  EXPECT_TRUE(tvtest::contains(why, "'Annotations/a.xml': object 1 ('dog') has <xmax> '3x'")) << why;
  EXPECT_TRUE(
      tvtest::contains(tvtest::thrown_message([] { tvh::parse_voc_xml("<annotation><size/></annotation>", "b.xml"); }),
                       "'b.xml' gives the photo's width"));
  EXPECT_TRUE(
      tvtest::contains(tvtest::thrown_message([] { tvh::parse_voc_xml("<annotation", "c.xml"); }), "not valid XML"));
}
