// The board's text menu with the whole firmware app behind it, on the in-memory board of the 32-bit
// tests (tests/m32/memory_board.h): any serial bytes as keys and `n NAME` and `c NAME` lines, so new
// classes get any name, capture, Train, Learn (one epoch), Infer and its corrections run in any order.
// Checked: no sanitizer report, the app comes back to its menu, no overflowed decoder buffer, every folder
// made under /images is one a class can name (tv::name_allowed) or the board's own _unsure, no file is
// written outside /images and /header, and the card's model is the old one or a model that decodes.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "link_drive.h"
#include "memory_board.h"
#include "tv/names.h"

using namespace m32test;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 512) return 0;  // a menu session, not a file
  static const Bytes old_model = tinyvision_blob(5);
  MemoryBoard board;
  board.dirs.insert("/header");
  const char* const folders[] = {"0blank", "1circle", "2cross", "3new"};
  put_photos(board, folders, 4, 4);
  board.files["/header/model.tvb"] = old_model;
  board.frames = {jpeg_header(48, 48, 2), jpeg_header(48, 48, 3), jpeg_header(56, 48, 4)};
  tvfw::AppConfig cfg;
  cfg.epochs = 1;
  tvfw::App app(board, cfg);
  app.setup();
  Bytes stream;
  for (size_t i = 0; i < size; ++i)
    if (data[i] != tv::link::kMagic0) stream.push_back(data[i]);  // the link has fuzz_link
  if (!run_stream(app, board, stream)) abort();                   // the board never came back to its menu
  if (board.overflows) abort();
  for (const std::string& d : board.dirs) {
    if (d.compare(0, 8, "/images/") != 0) continue;
    const std::string name = d.substr(8);
    if (name != "_unsure" && !tv::name_allowed(name.c_str(), name.size(), tvfw::kMaxLabelLength)) abort();
  }
  for (const auto& f : board.files)
    if ((f.first.compare(0, 8, "/images/") != 0 && f.first.compare(0, 8, "/header/") != 0) ||
        f.first.find("/../") != std::string::npos)
      abort();
  const Bytes& now = board.files["/header/model.tvb"];
  if (now != old_model) {
    static tv::BlobView view;
    if (!tv::blob_decode(now.data(), now.size(), &view).ok()) abort();
  }
  return 0;
}
