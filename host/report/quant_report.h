// tvquant's HTML report (tvquant --report FILE): a separate self-contained page, in the style of
// MODEL.report.html, with float vs int8 per class, the photos on which they disagree, each layer's
// exponents and its 20-bit accumulator headroom, and the memory on the board.
#pragma once
#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/quant/quantize.h"
#include "tv/model/model.h"

namespace tvh {

struct QuantReportInput {
  std::string title;                       // e.g. "model.q8.tvb: int8 of model.tvb"
  std::string command;                     // the command line as run
  std::string calibration;                 // how the exponents were chosen, in words
  const Dataset* ds = nullptr;             // the images compared on
  std::string compared_on;                 // which images, in words
  std::vector<int> idx;                    // dataset indices compared
  std::vector<int> float_pred, int8_pred;  // per idx
  const tv::ModelPlan* plan = nullptr;
  const QuantResult* quant = nullptr;
  std::vector<std::string> next_commands;
};

// The whole page.
std::string quant_html_report(const QuantReportInput& in);

}  // namespace tvh
