// tvlink pull: the board's /images/<class>/ photos into DEST/<class>/, incrementally; tvlink pull-model:
// the card's model file (and its backup) into a file.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/link/link.h"

namespace tvh {

struct PullReport {
  int copied = 0;     // files transferred
  int unchanged = 0;  // already in DEST with the same name, size and CRC-32
  uint64_t bytes = 0;
  std::vector<std::string> kept;     // local files that differ from the board's (or are not regular files): untouched
  std::vector<std::string> refused;  // board names no file here may have (what and why): not copied
  std::vector<std::string> failed;   // board files the board could not send (what and its reason): not copied
  bool complete() const { return kept.empty() && refused.empty() && failed.empty(); }
};

// Copies every photo (a name tvtrain reads as an image) of every class folder of the card's /images
// into dest/<class>/ (created when missing): a file already there with the same size and CRC-32 is
// skipped, one that differs is named in `kept` and never overwritten. Writes only regular files inside
// dest, each through a temporary file renamed into place; class or file names that could leave dest
// ("..", "/", control characters) are refused. A file the board cannot send (its refusal) is named in
// `failed` and the others still come. `progress` gets a line now and then.
PullReport pull_photos(LinkClient& link, const std::string& dest,
                       const std::function<void(const std::string&)>& progress);

// What became of one model file pull_model asked the board for.
struct ModelPull {
  enum Outcome { kWritten, kUnchanged, kKept } outcome = kWritten;  // kKept: dest differs, left as it was
  std::string card_path;  // the board's name of the file ("/header/model.tvb")
  uint32_t bytes = 0, crc = 0;
};

// Refuses (tvh::Error, naming `role`, the path and the fix) a destination a model cannot be pulled
// into: a symbolic link or anything but a regular file, a read-only file, a missing or unwritable
// folder, the name of another format, or the same file as one of `others` (check_output's rules).
void check_model_dest(const NamedPath& dest, const std::vector<NamedPath>& others);

// Copies the card's model file (which = tv::link::kModelFile) or its backup (kModelBackup) into `dest`,
// byte for byte, checked against the board's size and CRC-32, through a temporary file renamed into
// place. A dest that already holds the same bytes is left as it is (kUnchanged); one with other bytes
// is never touched (kKept) unless `overwrite`. Throws BoardRefused when the card holds no such file.
ModelPull pull_model(LinkClient& link, uint8_t which, const NamedPath& dest, bool overwrite,
                     const std::function<void(uint64_t)>& progress);

}  // namespace tvh
