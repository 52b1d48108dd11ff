// What tvexport does, as functions: C headers (TinyVision and webmcu styles) through the core's one
// header writer (tv/formats/header_writer.h), and the `info` report. Every failure is a tvh::Error whose
// message is one sentence naming the file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/model/model_io.h"

namespace tvh {

// The .tvb bytes a loaded model is exported from: the blob itself for a .tvb file; for a raw
// myWeights.bin a float blob encoded from it (provenance names the conversion, never a time or a
// path, so the same weights give the same bytes).
std::vector<uint8_t> export_blob_bytes(const LoadedModel& m, const std::string& version);

// The TinyVision-style C header of a model. `source` names the file in messages; `prefix` is the
// identifier prefix (a C identifier, e.g. "TV_MODEL"); `version` goes into the banner.
std::string tinyvision_header(const LoadedModel& m, const std::string& source, const std::string& prefix,
                              const std::string& version);

// A backbone (provenance role=backbone, tv/train/backbone.h) as the board bakes it: its layers with the
// pretraining head dropped, a model of tv::kBoardMinClasses classes (the fewest the format holds) whose
// head rows are zero, its provenance saying so (head=dropped). Any other model is returned as it is.
// *dropped: the pretraining classes dropped (0 when not a backbone).
LoadedModel backbone_for_board(LoadedModel m, const std::string& source, int* dropped);

// The reference firmware's myWeights.h for a float webmcu model (byte for byte its layout).
std::string webmcu_header(const LoadedModel& m, const std::string& source);

// Parses a memory budget: a byte count with an optional binary suffix K/KB/KiB or M/MB/MiB
// (any case): "300000", "512K" = 524288, "1M" = 1048576. Throws tvh::UsageError on anything else.
size_t parse_budget(const std::string& text);

// The `tvexport info` report: architecture per layer, parameters and bytes (float/int8), the
// ESP32-S3 arenas (inference; training with 1 and 2 lanes), labels, dtype, CRC-32, provenance and,
// when budget > 0, whether the model fits it. The CRC-32 is zlib's crc32 of the blob (a .tvb) or of
// the whole file (a raw myWeights.bin): the number a header exported from a .tvb carries.
struct InfoRequest {
  std::string source;       // the file, as named by the user
  size_t budget = 0;        // 0: no budget check
  std::string budget_text;  // as the user wrote it
};
std::string info_text(const LoadedModel& m, const InfoRequest& req);
std::string info_json(const LoadedModel& m, const InfoRequest& req);  // one JSON object and a newline
// False when a budget is given and the inference of the model (on the engine that runs it: int8 for an
// int8 model) does not fit it: `tvexport info --budget` then exits 1.
bool info_fits(const LoadedModel& m, const InfoRequest& req);

}  // namespace tvh
