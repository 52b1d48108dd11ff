// tvlink pull: the board's /images/<class>/ photos into DEST/<class>/, incrementally.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "host/link/link.h"

namespace tvh {

struct PullReport {
  int copied = 0;     // files transferred
  int unchanged = 0;  // already in DEST with the same name, size and CRC-32
  uint64_t bytes = 0;
  std::vector<std::string> kept;  // local files that differ from the board's (or are not regular files): untouched
};

// Copies every photo (a name tvtrain reads as an image) of every class folder of the card's /images
// into dest/<class>/ (created when missing): a file already there with the same size and CRC-32 is
// skipped, one that differs is named in `kept` and never overwritten. Writes only regular files inside
// dest, each through a temporary file renamed into place; class or file names that could leave dest
// ("..", "/", control characters) are refused. `progress` gets a line now and then.
PullReport pull_photos(LinkClient& link, const std::string& dest,
                       const std::function<void(const std::string&)>& progress);

}  // namespace tvh
