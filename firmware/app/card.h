// SD-card helpers of the app: whole-file reads, buffered writes, and the atomic replace with
// backup that every save goes through.
//
// Atomic replace of PATH (what a power cut at any moment leaves behind):
//   1. write PATH.tmp, close it, read it back and compare its CRC-32 with what was written;
//   2. keep_backup: remove PATH.bak, rename PATH -> PATH.bak;  otherwise: remove PATH;
//   3. rename PATH.tmp -> PATH.
// Before 3 the previous file is intact (at PATH, or at PATH.bak with a verified PATH.tmp beside
// it); after 3 the new one is in place. The boot loader knows this: it looks at PATH, then (when
// PATH is missing or refused) at PATH.tmp, then at PATH.bak, and finishes the save (steps 2 and 3)
// only once a verified PATH.tmp has loaded; a side file's .tmp (model.h, myWeights.bin) is finished
// when it holds exactly what the loaded model gives, else removed.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "hal.h"
#include "tv/model/model.h"

namespace tvfw {

constexpr size_t kPathMax = 160;
constexpr size_t kReasonMax = 200;

// The core's sentence for a status (tv::status_message_text: the layer, its type when desc is given,
// what the numbers are), worded as the PC's tools word it: say("...: %s", StatusWords(st).text).
struct StatusWords {
  char text[kReasonMax];
  explicit StatusWords(const tv::Status& st, const tv::ModelDesc* desc = nullptr) {
    tv::status_message_text(st, desc, text, (int)sizeof(text));
  }
};

// A one-sentence reason, filled when something fails.
struct Reason {
  char text[kReasonMax] = {0};
  void set(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  // "what: " (nothing for a null what) and StatusWords(st, desc).
  void set_status(const char* what, const tv::Status& st, const tv::ModelDesc* desc = nullptr);
};

// "base" + "suffix" into out (kPathMax); false when it does not fit.
bool join_path(char* out, const char* a, const char* b, const char* c = "", const char* d = "");

// Reads the whole file into a new psram buffer (*data, freed by the caller with hal.psram_free).
// Refuses files larger than max_bytes. False with a reason otherwise.
bool read_whole_file(Hal& hal, const char* path, size_t max_bytes, uint8_t** data, size_t* size, Reason* why);

// Buffered writing to an open card file; remembers the first failure, counts bytes and their CRC-32.
class CardWriter {
 public:
  CardWriter(Hal& hal, int handle) : hal_(hal), handle_(handle) {}
  void write(const void* data, size_t n);
  // Writes what is buffered; false when any write so far failed.
  bool flush();
  bool failed() const { return failed_; }
  size_t bytes() const { return bytes_; }
  // Bytes the card accepted (fewer than bytes() after a failure).
  size_t written() const { return written_; }
  uint32_t crc() const { return crc_; }

 private:
  Hal& hal_;
  int handle_;
  uint8_t buf_[512];
  size_t used_ = 0;
  size_t bytes_ = 0;
  size_t written_ = 0;
  uint32_t crc_ = 0;
  bool failed_ = false;
};

// Produces a file's content into a writer; false to abandon the save (with a reason).
typedef bool (*ContentFn)(void* ctx, CardWriter* out, Reason* why);

// Replaces `path` atomically as described above. False with a reason naming the step and file;
// the previous file is then still in place.
bool replace_file_atomic(Hal& hal, const char* path, ContentFn content, void* ctx, bool keep_backup, Reason* why);
// Steps 2 and 3 alone: PATH.tmp (complete and verified by the caller) takes PATH's place, the old
// PATH becoming PATH.bak (keep_backup) or removed. Boot uses it to finish a save a power cut interrupted.
bool finish_replace(Hal& hal, const char* path, bool keep_backup, Reason* why);
// CRC-32 and length of a file as read back from the card; false when it cannot be read.
bool crc_of_file(Hal& hal, const char* path, uint32_t* crc, size_t* bytes);
// The same for bytes in memory.
bool replace_file_atomic(Hal& hal, const char* path, const uint8_t* data, size_t size, bool keep_backup, Reason* why);

// Writes a new file (a photo): `size` bytes as `tmp`, then renamed to `path`, which must not exist, so a
// power cut never leaves half a file under a name training reads. False with a reason (tmp removed).
bool write_new_file(Hal& hal, const char* tmp, const char* path, const uint8_t* data, size_t size, Reason* why);

// True for "*.jpg" / "*.jpeg" in any letter case that are not hidden (".name").
bool is_jpeg_name(const char* name);
// A Hal::list_dir callback: counts the photos (is_jpeg_name files) into the int that ctx points to.
void count_jpeg(void* ctx, const char* name, bool is_dir);

}  // namespace tvfw
