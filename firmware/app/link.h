// The board's side of the USB link protocol (tv/link/link_frame.h; documented in firmware/README.md):
// served from the text menu when a frame's first byte arrives, until the PC says Bye or falls silent
// for tv::link::kIdleMs; then the menu continues. Reads only files under /images and the two model
// files a ReadModel names (/header/model.tvb and its .bak), and changes the card only through
// LinkHandler::install_model, capture and rename. Fixed, static buffers: nothing is allocated per frame; a pushed model
// is held in one PSRAM buffer of its announced size until it is installed or dropped.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "card.h"
#include "hal.h"
#include "tv/link/link_frame.h"

namespace tvfw {

// The serial port's receive buffer the board needs for a full window of frames from the PC (the
// sketch sets it before Serial.begin; the cores' default of 256 bytes would drop most of a window).
constexpr size_t kLinkSerialRxBytes = tv::link::kWindow * tv::link::kMaxFrameBytes;

// What the protocol asks of the application.
class LinkHandler {
 public:
  virtual ~LinkHandler() {}
  // The status report, "key=value" lines, into out (cap bytes); returns its length.
  virtual size_t status_text(char* out, size_t cap) = 0;
  // Verifies a pushed model (it decodes, plans, its engine accepts it, it fits the memory) and
  // installs it on the card and in use. The handler owns `data` (a psram_alloc buffer) from here on.
  // True with what was installed in `done`; false with why (the card and the model in use are
  // then unchanged).
  virtual bool install_model(uint8_t* data, size_t size, Reason* done, Reason* why) = 0;
  // Takes `count` photos of the class named `label` (len bytes) as the menu's capture does. True with
  // what was saved in `done`; false with why.
  virtual bool capture(const char* label, size_t len, int count, Reason* done, Reason* why) = 0;
  // Renames a class: its /images folder and the model's label (App::rename_class). True with what was
  // done; false with why.
  virtual bool rename(const char* from, size_t from_len, const char* to, size_t to_len, Reason* done, Reason* why) = 0;
};

// "" or "<class>" or "<class>/<file>" relative to /images: true with the card path in out
// (kPathMax). Refuses absolute paths, "." and ".." parts, empty parts, backslashes, control
// characters and names longer than tv::link::kMaxPath, with the reason.
bool link_images_path(const uint8_t* rel, size_t n, char* out, Reason* why);

// Serves one session; `first` is the byte that started it (already read from the serial port).
// Returns when the PC said Bye (true) or fell silent (false).
bool serve_link(Hal& hal, LinkHandler& handler, uint8_t first);

}  // namespace tvfw
