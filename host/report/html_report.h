// MODEL.report.html: one self-contained page (inline CSS and SVG, photos as data: URIs, readable
// without JavaScript) that shows a run: the dataset, the curve and the confusion matrix (each cell
// linking to its photos), per-class precision and recall with intervals, sample photos of every class,
// the misclassified photos worst first, the likely label mistakes (from --kfold), the network and its
// memory on the board, and the next commands. Every string from the user is HTML-escaped.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/train/suspects.h"
#include "host/train/training.h"
#include "tv/model/model.h"

namespace tvh {

// The data URIs of the report's pictures may take this much; later pictures are named only. The file stays
// under kReportMaxBytes for any dataset: the page (html_report, quant_html_report) under kReportPageBytes,
// leaving room for tvtrain's side-output marker. Its text comes first: every list is capped (the count of
// the rest said), every user string shortened, and when the text of a page without pictures would still
// be over, its lists are shortened further; the pictures then take what is left, up to their budget.
constexpr size_t kReportImageBudget = size_t(2300) << 10;
constexpr size_t kReportMaxBytes = 2990000;
constexpr size_t kReportMarkerRoom = 1024;
constexpr size_t kReportPageBytes = kReportMaxBytes - kReportMarkerRoom;
// At most this many misclassified photos (and as many suspects) are shown with pictures.
constexpr size_t kReportMaxPhotos = 200;

struct ReportInput {
  const Dataset* ds = nullptr;
  std::string title;           // e.g. "model.tvb: tinyvision on photos/"
  std::string command;         // the command line as run
  std::string preset, recipe;  // the preset's name; the recipe in words
  uint64_t seed = 1;
  std::string started;                // when the run started (UTC, ISO 8601)
  double seconds = 0;                 // how long it took
  std::vector<std::string> warnings;  // the run's warnings (the dataset's own are added)
  // What the confusion matrix and the misclassified photos count ("validation images", "every image",
  // "out-of-fold predictions of 5 folds"), and that evaluation (its probs filled); may be empty.
  std::string evaluated;
  const EvalResult* eval = nullptr;
  const std::vector<EpochRecord>* history = nullptr;  // the curve (none for --eval and --kfold)
  int kept_epoch = 0;
  bool kfold = false;                   // suspects were looked for
  std::vector<SuspectLabel> suspects;   // ranked (host/train/suspects.h)
  const tv::ModelPlan* plan = nullptr;  // the network (float weights in params)
  const float* params = nullptr;
  std::vector<std::string> next_commands;
  size_t image_budget = kReportImageBudget;
  size_t max_bytes = kReportMaxBytes;  // the file's cap (the page: kReportMarkerRoom less); tests lower it
};

// The whole page.
std::string html_report(const ReportInput& in);

// The parts the other reports reuse (host/report/quant_report.h): the page's opening (doctype, inline style,
// the escaped title as <title> and <h1>) and closing (the filter script), and one photo card (the
// original, the model's input at its real size, the path and `caption_html`, already escaped).
class ThumbnailMaker;
std::string report_page_open(const std::string& title);
// Class c's name as every report shows it: HTML-escaped, long names shortened around "..." (60 bytes, at
// most 120 once escaped).
std::string report_class_name(const Dataset& ds, size_t c);
// Any user string as the reports show it: HTML-escaped, shortened around "..." to `bytes` (at most twice
// that once escaped).
std::string report_text(const std::string& text, size_t bytes);
// A page within max_bytes - kReportMarkerRoom: page(budget) built with the pictures' budget, and again with
// a smaller one while the page is over (the text of the page without pictures must fit).
std::string report_within_cap(size_t image_budget, size_t max_bytes,
                              const std::function<std::string(size_t budget)>& page);
// The sentence closing a page some of whose pictures were left out (empty when none was): the pictures'
// budget and the page's cap (for a page whose text without pictures fits).
std::string report_left_out_note(size_t left_out, size_t image_budget, size_t max_bytes);
// The most classes a report lists in a table (the rest counted; --json has all).
constexpr size_t kReportListedClasses = 100;
std::string report_page_close();
std::string report_photo_card(ThumbnailMaker& thumbs, const Dataset& ds, size_t i, const std::string& id,
                              const std::string& caption_html, const std::string& data_attrs);

// The command line as a shell reads it back: `tool`, then each argument after argv[0] as a shell word
// (tvh::shell_word).
std::string report_command_line(const std::string& tool, int argc, char** argv);

// Where the report goes for a model path: model.tvb -> model.report.html.
std::string report_path_for(const std::string& model_path);

}  // namespace tvh
