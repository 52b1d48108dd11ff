#include "link.h"

#include <stdio.h>
#include <string.h>

#include "app.h"
#include "tv/crc32.h"
#include "tv/link/link_frame.h"
#include "tv/little_endian.h"

namespace tvfw {

namespace lk = tv::link;

bool link_images_path(const uint8_t* rel, size_t n, char* out, Reason* why) {
  if (n > lk::kMaxPath) {
    why->set("the path is %u bytes long; at most %u are accepted", (unsigned)n, (unsigned)lk::kMaxPath);
    return false;
  }
  if (n > 0 && rel[0] == '/') {
    why->set("absolute paths are refused: paths are relative to %s", kImagesDir);
    return false;
  }
  size_t part = 0;  // start of the current part
  for (size_t i = 0; i <= n; ++i) {
    if (i < n && rel[i] != '/') {
      if (rel[i] < 32 || rel[i] == 127 || rel[i] == '\\') {
        why->set("the path holds a control character or a backslash");
        return false;
      }
      continue;
    }
    const size_t len = i - part;
    if (n > 0 &&
        (len == 0 || (len == 1 && rel[part] == '.') || (len == 2 && rel[part] == '.' && rel[part + 1] == '.'))) {
      why->set("the path has an empty, '.' or '..' part: only files under %s are served", kImagesDir);
      return false;
    }
    part = i + 1;
  }
  char tail[lk::kMaxPath + 2] = {0};
  if (n > 0) {
    tail[0] = '/';
    memcpy(tail + 1, rel, n);
  }
  if (!join_path(out, kImagesDir, tail)) {
    why->set("the path is too long for the card");
    return false;
  }
  return true;
}

namespace {

// Everything a session holds, static: off the loop task's stack and never allocated.
struct Session {
  Hal* hal = nullptr;
  LinkHandler* handler = nullptr;
  lk::FrameParser parser;
  uint8_t tx[lk::kMaxFrameBytes];
  uint8_t ring[lk::kWindow][lk::kMaxPayload];  // the chunks of a Read still unacknowledged
  uint16_t ring_len[lk::kWindow];
  uint8_t answer[lk::kMaxPayload];
  char path[kPathMax];
  // a push in progress
  uint8_t* push = nullptr;
  uint32_t push_size = 0, push_crc = 0, push_next = 0;
  // the answer to the last PushEnd, sent again when the PC repeats it (Ok: size and CRC-32, then text)
  bool have_end = false;
  uint32_t end_seq = 0;
  uint8_t end_type = 0;
  uint8_t end_answer[8 + kReasonMax];
  size_t end_len = 0;
  uint32_t session = 0;       // the PC's session number (its Hello): every frame's CRC-32 starts from it
  Reason done, why;           // scratch (off the loop task's stack)
  uint32_t last_rx_ms = 0;    // the last whole frame
  uint32_t last_byte_ms = 0;  // the last byte
};
Session g;

void send(uint8_t type, uint32_t seq, const void* payload, size_t len) {
  const size_t n = lk::encode_frame(type, seq, payload, len, g.tx, sizeof g.tx, g.session);
  if (n) g.hal->serial_write((const char*)g.tx, n);
}

void send_text(uint8_t type, uint32_t seq, const char* text) {
  send(type, seq, text, strlen(text));
}

void drop_push() {
  if (g.push) g.hal->psram_free(g.push);
  g.push = nullptr;
  g.push_size = g.push_next = 0;
}

// The next frame, waiting up to wait_ms (0: only what has arrived). Bytes outside frames are skipped.
const lk::Frame* next_frame(uint32_t wait_ms) {
  const uint32_t t0 = g.hal->millis();
  for (;;) {
    lk::FrameParser::Result r = g.parser.drain();  // bytes read again after a broken frame first
    if (r == lk::FrameParser::kNone) {
      const int c = g.hal->serial_read();
      if (c < 0) {
        if (g.parser.in_frame() && g.hal->millis() - g.last_byte_ms >= lk::kFrameGapMs) {
          g.parser.abandon();  // a header that lied about its length
          continue;
        }
        if (g.hal->millis() - t0 >= wait_ms) return nullptr;
        g.hal->delay_ms(1);
        continue;
      }
      g.last_byte_ms = g.hal->millis();
      r = g.parser.feed((uint8_t)c);
    }
    if (r == lk::FrameParser::kFrame) {
      g.last_rx_ms = g.hal->millis();
      return &g.parser.frame();
    }
  }
}

// Reads chunk k of the open file into the ring (chunks are read once, in order).
bool fill_chunk(int f, uint32_t k, uint32_t size) {
  const uint32_t off = k * (uint32_t)lk::kMaxPayload;
  const uint32_t want = size - off < lk::kMaxPayload ? size - off : (uint32_t)lk::kMaxPayload;
  uint8_t* dst = g.ring[k % lk::kWindow];
  uint32_t got = 0;
  while (got < want) {
    const long r = g.hal->file_read(f, dst + got, want - got);
    if (r <= 0) return false;
    got += (uint32_t)r;
  }
  g.ring_len[k % lk::kWindow] = (uint16_t)want;
  return true;
}

// Sends a file as Data frames 0 .. chunks-1 and then End (the last chunk of the window), go-back-N.
// The Ok before them holds the size, and the card path when name_it (a ReadModel's answer).
void stream_file(uint32_t seq, const char* path, bool name_it = false) {
  const long size = g.hal->file_size(path);
  const int f = size >= 0 ? g.hal->file_open(path, false) : -1;
  if (f < 0) {
    char why[kPathMax + 40];
    snprintf(why, sizeof why, "%s is not a file on the card", path);
    send_text(lk::kErr, seq, why);
    return;
  }
  tv::write_le32(g.answer, (uint32_t)size);
  const size_t named = name_it ? strlen(path) : 0;  // a fixed card path, far shorter than the answer
  memcpy(g.answer + 4, path, named);
  send(lk::kOk, seq, g.answer, 4 + named);
  const uint32_t chunks = (uint32_t)(((uint64_t)size + lk::kMaxPayload - 1) / lk::kMaxPayload);
  uint32_t crc = 0, filled = 0;
  lk::SendWindow w;
  w.start(chunks + 1, g.hal->millis());
  while (!w.done()) {
    while (w.can_send()) {
      const uint32_t k = w.take();
      if (k == chunks) {
        uint8_t end[4];
        tv::write_le32(end, crc);
        send(lk::kEnd, k, end, 4);
        continue;
      }
      if (k == filled) {
        if (!fill_chunk(f, k, (uint32_t)size)) {
          g.hal->file_close(f);
          send_text(lk::kErr, k, "reading the file on the card failed");
          return;
        }
        crc = tv::crc32(crc, g.ring[k % lk::kWindow], g.ring_len[k % lk::kWindow]);
        filled++;
      }
      send(lk::kData, k, g.ring[k % lk::kWindow], g.ring_len[k % lk::kWindow]);
    }
    const lk::Frame* fr = next_frame(w.can_send() ? 0 : 2);
    if (fr && fr->type == lk::kAck && fr->len >= 4)
      w.ack(tv::read_le32(fr->payload), g.hal->millis());
    else if (fr)
      break;  // the PC moved on (a new request): this transfer is over
    if (!w.tick(g.hal->millis())) break;
  }
  g.hal->file_close(f);
}

struct ListJob {
  uint32_t first, index = 0;
  size_t used = 1;
  bool more = false;
};

void list_entry(void* ctx, const char* name, bool is_dir) {
  ListJob& j = *(ListJob*)ctx;
  const size_t n = strlen(name);
  if (n == 0 || n > 255 || name[0] == '.') return;
  const uint32_t i = j.index++;
  if (i < j.first || j.more) return;
  if (j.used + 6 + n > sizeof g.answer) {
    j.more = true;
    return;
  }
  char full[kPathMax];
  long size = 0;
  if (!is_dir && join_path(full, g.path, "/", name)) size = g.hal->file_size(full);
  tv::write_le32(g.answer + j.used, size > 0 ? (uint32_t)size : 0);
  g.answer[j.used + 4] = is_dir ? 1 : 0;
  g.answer[j.used + 5] = (uint8_t)n;
  memcpy(g.answer + j.used + 6, name, n);
  j.used += 6 + n;
}

void answer_crc(uint32_t seq) {
  const long size = g.hal->file_size(g.path);
  const int f = size >= 0 ? g.hal->file_open(g.path, false) : -1;
  if (f < 0) {
    send_text(lk::kErr, seq, "not a file on the card");
    return;
  }
  uint32_t crc = 0;
  long total = 0;
  for (;;) {
    const long r = g.hal->file_read(f, g.answer, sizeof g.answer);
    if (r <= 0) break;
    crc = tv::crc32(crc, g.answer, (size_t)r);
    total += r;
  }
  g.hal->file_close(f);
  uint8_t out[8];
  tv::write_le32(out, (uint32_t)total);
  tv::write_le32(out + 4, crc);
  send(lk::kOk, seq, out, 8);
}

// A ReadModel: the card's model or its backup, the two fixed paths it may name (nothing else).
void send_model(const lk::Frame& fr) {
  const uint8_t which = fr.len == 1 ? fr.payload[0] : 0xff;
  const char* path = which == lk::kModelFile ? kModelPath : which == lk::kModelBackup ? kModelBakPath : nullptr;
  Reason& why = g.why;
  why = Reason();
  if (!path)
    why.set("the model request names neither the model (0) nor its backup (1)");
  else if (!g.hal->sd_ready())
    why.set("the board has no SD card, so no model file to send");
  else if (!g.hal->exists(path))
    why.set(which == lk::kModelFile
                ? "the card holds no model (%s is missing): train, Learn or push one first"
                : "the card holds no backup model (%s is missing: one is kept when a model replaces another)",
            path);
  if (why.text[0]) {
    send_text(lk::kErr, fr.seq, why.text);
    return;
  }
  stream_file(fr.seq, path, true);
}

void push_begin(const lk::Frame& fr) {
  drop_push();
  g.have_end = false;
  if (fr.len < 8) {
    send_text(lk::kErr, fr.seq, "the push request is too short");
    return;
  }
  const uint32_t size = tv::read_le32(fr.payload), crc = tv::read_le32(fr.payload + 4);
  Reason& why = g.why;
  why = Reason();
  const long long card_free = g.hal->sd_free_bytes();
  const size_t psram_free = g.hal->psram_free_bytes();
  if (!g.hal->sd_ready())
    why.set("the board has no SD card to install the model on");
  else if (size == 0 || size > kMaxBlobBytes)
    why.set("the model is %u bytes; this firmware takes 1 to %u", (unsigned)size, (unsigned)kMaxBlobBytes);
  else if (card_free >= 0 && (long long)size > card_free)
    why.set("the model is %u bytes but the card has only %lld bytes free", (unsigned)size, card_free);
  else if (size > psram_free)
    why.set("the model is %u bytes but only %u bytes of PSRAM are free", (unsigned)size, (unsigned)psram_free);
  else if (!(g.push = (uint8_t*)g.hal->psram_alloc(size)))
    why.set("cannot allocate %u bytes of PSRAM for the model", (unsigned)size);
  if (why.text[0]) {
    send_text(lk::kErr, fr.seq, why.text);
    return;
  }
  g.push_size = size;
  g.push_crc = crc;
  g.push_next = 0;
  send(lk::kOk, fr.seq, nullptr, 0);
}

void push_data(const lk::Frame& fr) {
  if (!g.push) return;
  const uint64_t off = (uint64_t)g.push_next * lk::kMaxPayload;
  const uint64_t left = off < g.push_size ? g.push_size - off : 0;
  const uint64_t want = left < lk::kMaxPayload ? left : lk::kMaxPayload;
  if (fr.seq == g.push_next && fr.len == want && want > 0) {
    memcpy(g.push + off, fr.payload, fr.len);
    g.push_next++;
  }
  uint8_t ack[4];
  tv::write_le32(ack, g.push_next);
  send(lk::kAck, fr.seq, ack, 4);
}

void push_end(uint32_t seq) {
  if (g.have_end && seq == g.end_seq) {  // the PC did not hear the answer: the same again
    send(g.end_type, seq, g.end_answer, g.end_len);
    return;
  }
  Reason& done = g.done;
  Reason& why = g.why;
  done = Reason();
  why = Reason();
  const uint32_t size = g.push_size, crc = g.push_crc;
  if (!g.push) {
    why.set("no model was sent (push it again)");
  } else if ((uint64_t)g.push_next * lk::kMaxPayload < g.push_size) {
    why.set("only part of the model arrived (push it again)");
    drop_push();
  } else if (tv::crc32(0, g.push, g.push_size) != g.push_crc) {
    why.set("the model arrived with a wrong CRC-32 (push it again)");
    drop_push();
  } else {
    uint8_t* data = g.push;
    g.push = nullptr;  // the handler owns it now
    g.push_size = g.push_next = 0;
    if (!g.handler->install_model(data, size, &done, &why) && !why.text[0]) why.set("the model was refused");
  }
  g.have_end = true;
  g.end_seq = seq;
  g.end_type = why.text[0] ? lk::kErr : lk::kOk;
  g.end_len = 0;
  if (!why.text[0]) {  // Ok: the size and CRC-32 of what was installed (checked above), then what
    tv::write_le32(g.end_answer, size);
    tv::write_le32(g.end_answer + 4, crc);
    g.end_len = 8;
  }
  const char* text = why.text[0] ? why.text : done.text;
  const size_t n = strlen(text);
  memcpy(g.end_answer + g.end_len, text, n);
  g.end_len += n;
  send(g.end_type, seq, g.end_answer, g.end_len);
}

// A Hello: a new session (the PC's number; a push of an earlier PC dropped), answered from outside it.
void hello(const lk::Frame& fr) {
  drop_push();
  g.have_end = false;
  g.session = 0;  // the answer's CRC-32 starts from 0, as the Hello's did
  if (fr.len < 8 || tv::read_le32(fr.payload) != lk::kVersion || tv::read_le32(fr.payload + 4) == 0) {
    char why[120];
    snprintf(why, sizeof why, "this board speaks tvlink protocol %u and the PC another: update tvlink",
             (unsigned)lk::kVersion);
    send_text(lk::kErr, fr.seq, why);
    g.parser.set_session(0);
    return;
  }
  const uint32_t session = tv::read_le32(fr.payload + 4);
  uint8_t out[16];
  tv::write_le32(out, lk::kVersion);
  tv::write_le32(out + 4, (uint32_t)lk::kMaxPayload);
  tv::write_le32(out + 8, lk::kWindow);
  tv::write_le32(out + 12, session);
  send(lk::kOk, fr.seq, out, sizeof out);
  g.session = session;
  g.parser.set_session(session);
}

// Answers one request; false after Bye.
bool handle(const lk::Frame& fr) {
  Reason& why = g.why;
  why = Reason();
  switch (fr.type) {
    case lk::kHello: hello(fr); return true;
    case lk::kStatus: {
      const size_t n = g.handler->status_text((char*)g.answer, sizeof g.answer);
      send(lk::kOk, fr.seq, g.answer, n);
      return true;
    }
    case lk::kList: {
      if (fr.len < 4 || !link_images_path(fr.payload + 4, fr.len - 4u, g.path, &why)) {
        send_text(lk::kErr, fr.seq, fr.len < 4 ? "the list request is too short" : why.text);
        return true;
      }
      ListJob job;
      job.first = tv::read_le32(fr.payload);
      if (!g.hal->list_dir(g.path, list_entry, &job)) {
        send_text(lk::kErr, fr.seq, "not a folder on the card");
        return true;
      }
      g.answer[0] = job.more ? 1 : 0;
      send(lk::kEntries, fr.seq, g.answer, job.used);
      return true;
    }
    case lk::kCrc:
    case lk::kRead:
      if (!link_images_path(fr.payload, fr.len, g.path, &why)) {
        send_text(lk::kErr, fr.seq, why.text);
        return true;
      }
      if (fr.type == lk::kCrc)
        answer_crc(fr.seq);
      else
        stream_file(fr.seq, g.path);
      return true;
    case lk::kReadModel: send_model(fr); return true;
    case lk::kPushBegin: push_begin(fr); return true;
    case lk::kData: push_data(fr); return true;
    case lk::kPushEnd: push_end(fr.seq); return true;
    case lk::kCapture: {
      Reason& done = g.done;
      done = Reason();
      const bool ok = fr.len >= 2 && g.handler->capture((const char*)fr.payload + 2, fr.len - 2u,
                                                        tv::read_le16(fr.payload), &done, &why);
      send_text(ok ? lk::kOk : lk::kErr, fr.seq, ok ? done.text : (why.text[0] ? why.text : "a short request"));
      return true;
    }
    case lk::kRename: {
      Reason& done = g.done;
      done = Reason();
      const size_t n = fr.len >= 1 ? fr.payload[0] : 0;
      const bool ok = fr.len >= 1 + n && n > 0 &&
                      g.handler->rename((const char*)fr.payload + 1, n, (const char*)fr.payload + 1 + n,
                                        fr.len - 1u - n, &done, &why);
      send_text(ok ? lk::kOk : lk::kErr, fr.seq,
                ok ? done.text : (why.text[0] ? why.text : "the rename request is malformed"));
      return true;
    }
    case lk::kBye: send(lk::kOk, fr.seq, nullptr, 0); return false;
    case lk::kAck: return true;  // a late ack of a finished transfer
    default: send_text(lk::kErr, fr.seq, "unknown request type"); return true;
  }
}

}  // namespace

bool serve_link(Hal& hal, LinkHandler& handler, uint8_t first) {
  g.hal = &hal;
  g.handler = &handler;
  g.parser.reset();
  g.parser.set_session(0);
  g.session = 0;
  g.have_end = false;
  g.last_rx_ms = hal.millis();
  g.parser.feed(first);
  bool bye = false;
  for (;;) {
    const lk::Frame* fr = next_frame(50);
    if (fr && !handle(*fr)) {
      bye = true;
      break;
    }
    if (!fr && hal.millis() - g.last_rx_ms >= lk::kIdleMs) break;
  }
  drop_push();
  g.parser.reset();
  return bye;
}

}  // namespace tvfw
