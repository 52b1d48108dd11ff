// Driving the board's USB link on the in-memory board: the byte stream a PC sends to push a model,
// and running the app over a stream until it is idle again. Shared by the 32-bit link tests and the
// link protocol's fuzz target.
#pragma once
#include <string.h>

#include "app.h"
#include "memory_board.h"
#include "tv/crc32.h"
#include "tv/link/link_frame.h"
#include "tv/little_endian.h"

namespace m32test {

// The session a driven PC opens with its Hello: every later frame's CRC-32 starts from it.
constexpr uint32_t kSession = 0x7e57c0deu;

inline void add_frame(Bytes* out, uint8_t type, uint32_t seq, const uint8_t* payload, size_t len) {
  uint8_t frame[tv::link::kMaxFrameBytes];
  const uint32_t session = type == tv::link::kHello ? 0 : kSession;
  const size_t n = tv::link::encode_frame(type, seq, payload, len, frame, sizeof frame, session);
  out->insert(out->end(), frame, frame + n);
}

// A Hello opening kSession.
inline void add_hello(Bytes* out, uint32_t seq) {
  uint8_t greeting[8];
  tv::write_le32(greeting, tv::link::kVersion);
  tv::write_le32(greeting + 4, kSession);
  add_frame(out, tv::link::kHello, seq, greeting, sizeof greeting);
}

// What a PC sends before a push's data: Hello and PushBegin for `model`.
inline Bytes push_head(const Bytes& model) {
  namespace lk = tv::link;
  Bytes s;
  add_hello(&s, 1);
  uint8_t begin[8];
  tv::write_le32(begin, (uint32_t)model.size());
  tv::write_le32(begin + 4, tv::crc32(0, model.data(), model.size()));
  add_frame(&s, lk::kPushBegin, 2, begin, sizeof begin);
  return s;
}

// Data frame k of `model`, appended to out; the number of Data frames of a model.
inline void add_data(Bytes* out, const Bytes& model, uint32_t k) {
  const size_t off = (size_t)k * tv::link::kMaxPayload;
  add_frame(out, tv::link::kData, k, model.data() + off, std::min(tv::link::kMaxPayload, model.size() - off));
}
inline uint32_t data_frames(const Bytes& model) {
  return (uint32_t)((model.size() + tv::link::kMaxPayload - 1) / tv::link::kMaxPayload);
}

// What a PC sends to push `model`: Hello, PushBegin, every Data frame, PushEnd, Bye (the board
// handles them in order, so nothing waits for the acks).
inline Bytes push_stream(const Bytes& model) {
  Bytes s = push_head(model);
  for (uint32_t k = 0; k < data_frames(model); ++k) add_data(&s, model, k);
  add_frame(&s, tv::link::kPushEnd, 3, nullptr, 0);
  add_frame(&s, tv::link::kBye, 4, nullptr, 0);
  return s;
}

// Types `stream` into the board and runs the app until it waits for input with none left; false when
// it never does.
inline bool run_stream(tvfw::App& app, MemoryBoard& board, const Bytes& stream) {
  board.serial_in.insert(board.serial_in.end(), stream.begin(), stream.end());
  for (int i = 0; i < 100000; ++i) {
    app.loop();
    if (board.serial_in.empty() && app.waiting_for_input()) return true;
  }
  return false;
}

}  // namespace m32test
