#include "host/link/link.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "host/base/error.h"
#include "host/base/text.h"
#include "tv/crc32.h"
#include "tv/little_endian.h"

namespace tvh {

namespace lk = tv::link;

namespace {

class SteadyClock : public Clock {
 public:
  double now_s() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

// A session number no earlier client on this port had (0 means none).
uint32_t random_session() {
  std::random_device rd;
  for (;;) {
    const uint32_t s = rd();
    if (s != 0) return s;
  }
}

constexpr uint32_t kMaxReadBytes = 64u << 20;  // the largest file a pull copies (photos are KBs)
// The overall deadline of a transfer: this floor, plus its bytes at the slowest rate a working link
// gives (a board streaming frames for ever is stopped by it, whatever each frame restarts).
constexpr double kDeadlineFloorS = 10;
constexpr double kSlowestBytesPerS = 8000;  // below a 115200-baud UART bridge (11.5 KB/s)

// What a board says (status, refusals, what it did), as visible text: its control bytes (ESC, BEL, a bare
// carriage return, NUL) written out, so that a board can neither retitle nor clear the terminal.
std::string text_of(const lk::Frame& f) {
  return visible(std::string((const char*)f.payload, f.len));
}

}  // namespace

Clock& steady_clock() {
  static SteadyClock clock;
  return clock;
}

LinkClient::LinkClient(SerialPort& port, const LinkOptions& options)
    : port_(port),
      clock_(options.clock ? *options.clock : steady_clock()),
      session_(options.session ? options.session : random_session()),
      rx_(4096),
      tx_(lk::kMaxFrameBytes) {
  // The board may be busy (inferring a frame, printing): it enters the protocol when it next reads.
  uint8_t greeting[8];
  tv::write_le32(greeting, lk::kVersion);
  tv::write_le32(greeting + 4, session_);
  lk::Frame hello;
  bool ok = false;
  for (int attempt = 0; attempt < 20 && !ok; ++attempt) {
    try {
      hello = request(lk::kHello, greeting, sizeof greeting, 300, 4, 0);
      ok = true;
    } catch (const BoardRefused& e) {
      throw Error(std::string("the board refused this tvlink: ") + e.what());
    } catch (const Error&) {
    }
  }
  if (!ok)
    throw Error(
        "the board does not answer the tvlink protocol on this port (is it a TinyVision board, idle in its "
        "menu, with this firmware?)");
  const uint32_t version = hello.len >= 4 ? tv::read_le32(hello.payload) : 0;
  if (version != lk::kVersion)
    throw Error("the board's firmware speaks tvlink protocol " + std::to_string(version) + " and this tvlink " +
                std::to_string(lk::kVersion) + ": " +
                (version < lk::kVersion ? "update the board's firmware" : "update tvlink"));
  if (hello.len < 16 || tv::read_le32(hello.payload + 4) != lk::kMaxPayload ||
      tv::read_le32(hello.payload + 12) != session_)
    throw Error("the board's answer to this tvlink's greeting is not for it (another program on the port?)");
  parser_.set_session(session_);
  open_ = true;
}

LinkClient::~LinkClient() {
  if (!open_) return;
  try {
    bye();
  } catch (const std::exception&) {
  }
}

void LinkClient::bye() {
  if (!open_) return;
  open_ = false;
  request(lk::kBye, nullptr, 0, 500);
}

void LinkClient::send(uint8_t type, uint32_t seq, const void* payload, size_t len, uint32_t session) {
  const size_t n = lk::encode_frame(type, seq, payload, len, tx_.data(), tx_.size(), session);
  if (!n) throw Error("internal: a tvlink frame of " + std::to_string(len) + " bytes is too large");
  port_.write(tx_.data(), n);
}

const lk::Frame* LinkClient::next(int timeout_ms) {
  const double deadline = clock_.now_s() + timeout_ms / 1000.0;
  for (;;) {
    for (lk::FrameParser::Result r = parser_.drain();; r = parser_.drain()) {  // bytes read again first
      if (r == lk::FrameParser::kFrame) return &parser_.frame();
      if (r != lk::FrameParser::kNone) continue;
      if (rx_pos_ >= rx_fill_) break;
      r = parser_.feed(rx_[rx_pos_++]);
      if (r == lk::FrameParser::kFrame) return &parser_.frame();
    }
    const double left = deadline - clock_.now_s();
    if (left < 0) return nullptr;
    const int wait_ms = std::min((int)(left * 1000) + 1, (int)lk::kFrameGapMs);
    rx_fill_ = port_.read(rx_.data(), rx_.size(), wait_ms);
    rx_pos_ = 0;
    if (rx_fill_ == 0 && wait_ms == (int)lk::kFrameGapMs) parser_.abandon();  // a frame that lied about its length
  }
}

lk::Frame LinkClient::request(uint8_t type, const void* payload, size_t len, int timeout_ms, int attempts,
                              int64_t session) {
  const uint32_t seq = ++seq_;
  ++stats_.requests;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    send(type, seq, payload, len, session < 0 ? session_ : (uint32_t)session);
    const double deadline = clock_.now_s() + timeout_ms / 1000.0;
    for (;;) {
      const double left = deadline - clock_.now_s();
      const lk::Frame* f = left > 0 ? next((int)(left * 1000) + 1) : nullptr;
      if (!f) break;
      if (f->seq != seq || (f->type != lk::kOk && f->type != lk::kErr && f->type != lk::kEntries)) continue;
      if (f->type == lk::kErr) throw BoardRefused(text_of(*f));
      return *f;
    }
  }
  throw Error("the board stopped answering (the cable or the board went away?)");
}

std::string LinkClient::status() {
  return text_of(request(lk::kStatus, nullptr, 0));
}

double LinkClient::deadline_for(uint64_t bytes) {
  return clock_.now_s() + kDeadlineFloorS + (double)bytes / kSlowestBytesPerS;
}

uint32_t LinkClient::ms() {
  return (uint32_t)(uint64_t)(clock_.now_s() * 1000.0);
}

std::vector<RemoteEntry> LinkClient::list(const std::string& rel) {
  std::vector<RemoteEntry> out;
  // at most what a FAT folder holds; in time for the bytes received so far at the slowest rate
  const double t0 = clock_.now_s();
  uint64_t received = 0;
  for (;;) {
    if (clock_.now_s() > t0 + kDeadlineFloorS + (double)received / kSlowestBytesPerS)
      throw Error("the board's listing of /images/" + rel + " did not end in time (" + std::to_string(out.size()) +
                  " entries so far): the board or the cable is failing");
    std::vector<uint8_t> req(4 + rel.size());
    tv::write_le32(req.data(), (uint32_t)out.size());
    std::memcpy(req.data() + 4, rel.data(), rel.size());
    const lk::Frame f = request(lk::kList, req.data(), req.size());
    received += lk::kHeaderBytes + f.len + lk::kCrcBytes;
    size_t at = 1;
    bool any = false;
    while (at + 6 <= f.len) {
      RemoteEntry e;
      e.size = tv::read_le32(f.payload + at);
      e.is_dir = f.payload[at + 4] != 0;
      const size_t n = f.payload[at + 5];
      if (at + 6 + n > f.len) throw Error("the board sent a broken folder listing of /images/" + rel);
      e.name.assign((const char*)f.payload + at + 6, n);
      out.push_back(e);
      at += 6 + n;
      any = true;
    }
    if (f.len < 1 || f.payload[0] == 0 || !any) return out;
    if (out.size() > kMaxListEntries)
      throw Error("the board lists more than " + std::to_string(kMaxListEntries) + " entries in /images/" + rel +
                  ", more than a FAT folder holds: the board is failing");
  }
}

void LinkClient::crc(const std::string& rel, uint32_t* size, uint32_t* crc) {
  const lk::Frame f = request(lk::kCrc, rel.data(), rel.size());
  if (f.len < 8) throw Error("the board sent a short answer for the CRC of /images/" + rel);
  *size = tv::read_le32(f.payload);
  *crc = tv::read_le32(f.payload + 4);
}

std::vector<uint8_t> LinkClient::read(const std::string& rel, const std::function<void(uint64_t)>& progress) {
  const double t0 = clock_.now_s();
  const lk::Frame ok = request(lk::kRead, rel.data(), rel.size());
  return receive(ok, "/images/" + rel, t0, progress);
}

std::vector<uint8_t> LinkClient::read_model(uint8_t which, std::string* card_path,
                                            const std::function<void(uint64_t)>& progress) {
  const double t0 = clock_.now_s();
  lk::Frame ok;
  try {
    ok = request(lk::kReadModel, &which, 1);
  } catch (const BoardRefused& e) {
    if (std::string(e.what()) == "unknown request type")  // firmware from before ReadModel
      throw Error("the board's firmware is older than this tvlink and cannot send its model: update the firmware");
    throw;
  }
  // the board names the file (u32 size, then its card path)
  std::string name = ok.len > 4 ? one_line(std::string((const char*)ok.payload + 4, ok.len - 4u)) : "";
  if (name.empty()) name = which == lk::kModelBackup ? "the board's backup model" : "the board's model";
  if (card_path) *card_path = name;
  return receive(ok, name, t0, progress);
}

std::vector<uint8_t> LinkClient::receive(const lk::Frame& ok, const std::string& name, double t0,
                                         const std::function<void(uint64_t)>& progress) {
  if (ok.len < 4) throw Error("the board sent a short answer for " + name);
  const uint32_t size = tv::read_le32(ok.payload);
  if (size > kMaxReadBytes)
    throw Error("the board announces " + name + " as " + std::to_string(size) +
                " bytes; tvlink copies files of up to " + std::to_string(kMaxReadBytes) + " bytes");
  const uint32_t chunks = (uint32_t)(((uint64_t)size + lk::kMaxPayload - 1) / lk::kMaxPayload);
  std::vector<uint8_t> data;
  data.reserve(size);
  uint32_t expected = 0;
  const double deadline = deadline_for(size);
  for (;;) {
    if (clock_.now_s() > deadline)
      throw Error("the board did not finish sending " + name + " in time (" + std::to_string(data.size()) + " of " +
                  std::to_string(size) + " bytes): the board or the cable is failing");
    const lk::Frame* f = next(3000);
    if (!f) throw Error("the board stopped sending " + name + " (the cable or the board went away?)");
    if (f->type == lk::kErr) throw BoardRefused(text_of(*f));
    if (f->type != lk::kData && f->type != lk::kEnd) continue;
    if (f->seq == expected && f->type == lk::kData && expected < chunks) {
      data.insert(data.end(), f->payload, f->payload + f->len);
      ++expected;
      if (progress) progress(data.size());
    }
    const bool end = f->type == lk::kEnd && f->seq == chunks && expected == chunks;
    uint8_t ack[4];
    tv::write_le32(ack, end ? chunks + 1 : expected);
    send(lk::kAck, f->seq, ack, 4);
    if (!end) continue;
    if (f->len < 4 || data.size() != size || tv::crc32(0, data.data(), data.size()) != tv::read_le32(f->payload))
      throw Error(name + " arrived damaged (size or CRC-32 differs from the board's): pull again");
    stats_.payload_bytes += size;
    stats_.seconds += clock_.now_s() - t0;
    return data;
  }
}

std::string LinkClient::push(const std::vector<uint8_t>& blob, const std::function<void(uint64_t)>& progress) {
  const double t0 = clock_.now_s();
  uint8_t begin[8];
  tv::write_le32(begin, (uint32_t)blob.size());
  tv::write_le32(begin + 4, tv::crc32(0, blob.data(), blob.size()));
  request(lk::kPushBegin, begin, sizeof begin);
  const uint32_t chunks = (uint32_t)((blob.size() + lk::kMaxPayload - 1) / lk::kMaxPayload);
  lk::SendWindow w;
  w.start(chunks, ms());
  const double deadline = deadline_for(blob.size());
  while (!w.done()) {
    if (clock_.now_s() > deadline)
      throw Error("the board did not take the model in time: the board or the cable is failing");
    while (w.can_send()) {
      const uint32_t k = w.take();
      const size_t off = (size_t)k * lk::kMaxPayload;
      send(lk::kData, k, blob.data() + off, std::min(lk::kMaxPayload, blob.size() - off));
    }
    const double wait0 = clock_.now_s();
    const lk::Frame* f = next(5);
    stats_.waiting_seconds += clock_.now_s() - wait0;
    if (f && f->type == lk::kAck && f->len >= 4 && w.ack(tv::read_le32(f->payload), ms()) && progress)
      progress(std::min<uint64_t>((uint64_t)w.base * lk::kMaxPayload, blob.size()));
    if (f && f->type == lk::kErr) throw BoardRefused(text_of(*f));
    if (!w.tick(ms())) throw Error("the board stopped acknowledging the model (the cable or the board went away?)");
    if (w.retries && !f) ++stats_.resends;
  }
  stats_.payload_bytes += blob.size();
  stats_.seconds += clock_.now_s() - t0;
  // The board verifies and installs it now (reads it back from the card): give it time. Its Ok names the
  // size and CRC-32 it installed: they must be this model's.
  const lk::Frame end = request(lk::kPushEnd, nullptr, 0, 15000);
  const uint32_t crc = tv::crc32(0, blob.data(), blob.size());
  if (end.len < 8 || tv::read_le32(end.payload) != blob.size() || tv::read_le32(end.payload + 4) != crc)
    throw Error("the board's answer does not confirm this model (" + std::to_string(blob.size()) + " bytes, CRC-32 " +
                hex32(crc) + "): it may run another; check with tvlink status and push again");
  return visible(std::string((const char*)end.payload + 8, end.len - 8u));
}

}  // namespace tvh

namespace tvh {

std::string LinkClient::capture(const std::string& label, int count) {
  std::vector<uint8_t> req(2 + label.size());
  tv::write_le16(req.data(), (uint16_t)count);
  std::memcpy(req.data() + 2, label.data(), label.size());
  // the board saves one photo after the other (a card write each); sent once: a repeat would take
  // the photos again
  return text_of(request(tv::link::kCapture, req.data(), req.size(), 5000 + 500 * count, 1));
}

std::string LinkClient::rename(const std::string& from, const std::string& to) {
  if (from.empty() || from.size() > 255 || 1 + from.size() + to.size() > tv::link::kMaxPayload)
    throw UsageError("the class name '" + one_line(from.substr(0, 40)) + "' is not one the board can have.");
  std::vector<uint8_t> req(1 + from.size() + to.size());
  req[0] = (uint8_t)from.size();
  std::memcpy(req.data() + 1, from.data(), from.size());
  std::memcpy(req.data() + 1 + from.size(), to.data(), to.size());
  // the board renames a folder and writes the model again, then loads it; sent once: a repeat would find
  // the class renamed already
  return text_of(request(tv::link::kRename, req.data(), req.size(), 30000, 1));
}

}  // namespace tvh
