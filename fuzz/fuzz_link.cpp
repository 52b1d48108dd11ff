// The board's side of the USB link protocol (firmware/app/link*.cpp) on the in-memory board, with the
// whole application behind it. The first byte chooses what the rest is:
//   even: a model pushed through well-formed frames (Hello, PushBegin, Data..., PushEnd, Bye), so
//         forged models reach the board's verification (decode, plan, engine, memory) and install;
//   odd:  raw bytes on the serial port after a frame's first byte (broken frames, lying lengths,
//         requests with any path).
// Checked: no sanitizer report, no overflowed decoder buffer, and the card's model is either the old
// one or a model that decodes (only a verified model is ever installed).
#include <stdint.h>
#include <stdlib.h>

#include "app.h"
#include "link_drive.h"
#include "memory_board.h"

using namespace m32test;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const Bytes old_model = tinyvision_blob(5);
  MemoryBoard board;
  board.dirs.insert("/header");
  board.dirs.insert("/images");
  board.dirs.insert("/images/0blank");
  board.files["/images/0blank/img_0.jpg"] = jpeg_header(48, 48, 1);
  board.files["/header/model.tvb"] = old_model;
  board.frames = {jpeg_header(48, 48, 2), jpeg_header(48, 48, 3)};  // for Capture requests
  tvfw::AppConfig cfg;
  tvfw::App app(board, cfg);
  app.setup();
  Bytes stream;
  if (data[0] & 1) {
    stream.push_back(tv::link::kMagic0);
    stream.insert(stream.end(), data + 1, data + size);
  } else {
    stream = push_stream(Bytes(data + 1, data + size));
  }
  if (!run_stream(app, board, stream)) abort();  // the board never came back to its menu
  if (board.overflows) abort();
  const Bytes& now = board.files["/header/model.tvb"];
  if (now != old_model) {
    static tv::BlobView view;
    if (!tv::blob_decode(now.data(), now.size(), &view).ok()) abort();
  }
  return 0;
}
