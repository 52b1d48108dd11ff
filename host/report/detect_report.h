// MODEL.report.html for a detector: one self-contained page (inline CSS and SVG, photos as data: URIs,
// readable without JavaScript) with the run, the figures (F1, precision, recall with intervals, the count
// error, per class) and the photos with their detections drawn over them, the worst first: a right object
// is a filled disc, a false alarm a hollow diamond, a labelled box that was found a solid frame and a missed
// one a dashed frame with a cross in its middle, so they are told apart without colour. Every string from the
// user is HTML-escaped; the page stays within its cap (html_report.h's budget rules).
#pragma once
#include <stddef.h>

#include <string>
#include <vector>

#include "host/photos/detection_dataset.h"
#include "host/report/html_report.h"
#include "host/train/detect_metrics.h"
#include "tv/model/model.h"

namespace tvh {

struct DetectReportInput {
  const DetectionDataset* ds = nullptr;
  std::string title;      // e.g. "det.tvb: detect on photos/"
  std::string command;    // the command line as run
  std::string evaluated;  // what the photos are: "validation photos", "every photo"
  std::vector<int> idx;   // the photos measured (dataset indices), in the order of `photos`
  const std::vector<PhotoDetections>* photos = nullptr;
  const DetectionMetrics* metrics = nullptr;
  const tv::ModelPlan* plan = nullptr;
  bool int8 = false;
  std::vector<std::string> next_commands;
  size_t image_budget = kReportImageBudget;
  size_t max_bytes = kReportMaxBytes;
};

std::string detect_html_report(const DetectReportInput& in);

}  // namespace tvh
