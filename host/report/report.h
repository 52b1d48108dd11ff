// Human-readable reports: confusion matrices, per-class accuracy, a training-curve SVG, progress,
// the files a dataset did not use.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/train/training.h"

namespace tvh {

// Past this many classes the confusion picture is compact: the kConfusionListed most frequent confusions
// and the kConfusionListed classes of lowest accuracy as bars, not the classes x classes grid (which would
// grow with the square of the classes).
constexpr size_t kConfusionGridClasses = 32;
constexpr size_t kConfusionListed = 30;
// The confusion picture (grid or compact, any class names, a title of any length) stays under this size;
// so does the curve picture at any number of epochs (a point per pixel column, at most 4, is kept).
constexpr size_t kConfusionSvgMaxBytes = size_t(512) << 10;
constexpr size_t kCurveSvgMaxBytes = size_t(256) << 10;
// A confusion matrix (rows = true class) with per-class accuracy, as text lines.
std::string confusion_text(const std::vector<std::string>& classes, const std::vector<int>& confusion);
// An SVG picture of loss (train and validation) and accuracy (train and validation) per epoch, with
// axis titles, round tick values, the legend outside the plot and the kept epoch marked (kept_epoch
// 0 = the last one).
std::string curve_svg(const std::vector<EpochRecord>& history, const std::string& title, int kept_epoch = 0);
// Where the curve picture goes for a model path: model.tvb -> model.curve.svg.
std::string curve_path_for(const std::string& model_path);
// Where the confusion picture goes for a model path: model.tvb -> model.confusion.svg.
std::string confusion_path_for(const std::string& model_path);
// The confusion matrix as an SVG picture: counts in cells shaded by their share of the true class; every
// text fits in the picture (and a count in its cell) at any class count; past kConfusionGridClasses the
// compact form. When cell_link is given, each non-empty cell (true i, predicted j) links to cell_link(i, j)
// (an empty string: no link; a link is expected to be short, like "#cell-3-7"); in the compact form a
// class's accuracy bar links to cell_link(i, i).
std::string confusion_svg(const std::vector<std::string>& classes, const std::vector<int>& confusion,
                          const std::string& title,
                          const std::function<std::string(size_t, size_t)>& cell_link = nullptr);

// Precision, recall and F1 of one class (0 when undefined), and its number of images.
struct ClassMetrics {
  double precision = 0, recall = 0, f1 = 0;
  int support = 0;    // images of the class (row sum)
  int predicted = 0;  // images predicted as the class (column sum)
};
std::vector<ClassMetrics> class_metrics(const std::vector<int>& confusion, size_t classes);
// The per-class table (precision, recall, F1, images) as text lines.
std::string class_metrics_text(const std::vector<std::string>& classes, const std::vector<int>& confusion);
// The first `show` misclassified images of `r` ("path: true cat, predicted dog (87.1 %)"), then
// "... and N more" when some were left out; no final newline. Empty when none.
std::string misclassified_text(const Dataset& ds, const EvalResult& r, size_t show = 10);

// Progress on stderr: a bar with ETA when stderr is a terminal, nothing in between otherwise.
class Progress {
 public:
  explicit Progress(bool enabled);
  // Updates the bar: epoch (1-based) of epochs, done of total samples in this epoch.
  void update(int epoch, int epochs, int done, int total);
  // Updates a counting line: "<what> 123/4567".
  void update_items(const std::string& what, size_t done, size_t total);
  // Clears the bar line (before printing a normal line).
  void clear();
  bool is_terminal() const { return tty_; }

 private:
  bool tty_;
  double start_;
  double last_draw_ = -1;
  bool drawn_ = false;
};

// The unused files of a dataset for stderr: one line with the count per reason, then the first `show`
// files' sentences, then "... and N more" when some were left out; no final newline. Empty when none.
std::string skipped_text(const std::vector<SkippedFile>& skipped, size_t show = 5);

// "12.3 KB" style byte counts.
std::string human_bytes(size_t bytes);

}  // namespace tvh
