#include "card.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tv/crc32.h"

namespace tvfw {

void Reason::set(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
}

void Reason::set_status(const char* what, const tv::Status& st, const tv::ModelDesc* desc) {
  const StatusWords words(st, desc);
  if (what)
    set("%s: %s", what, words.text);
  else
    set("%s", words.text);
}

bool join_path(char* out, const char* a, const char* b, const char* c, const char* d) {
  const int n = snprintf(out, kPathMax, "%s%s%s%s", a, b, c, d);
  return n >= 0 && (size_t)n < kPathMax;
}

bool read_whole_file(Hal& hal, const char* path, size_t max_bytes, uint8_t** data, size_t* size, Reason* why) {
  *data = nullptr;
  *size = 0;
  const long n = hal.file_size(path);
  if (n < 0) {
    if (hal.exists(path))
      why->set("%s is a folder or a device, not a file", path);
    else
      why->set("%s does not exist", path);
    return false;
  }
  if ((size_t)n > max_bytes) {
    why->set("%s is %ld bytes, more than the %u this firmware reads", path, n, (unsigned)max_bytes);
    return false;
  }
  uint8_t* buf = (uint8_t*)hal.psram_alloc(n > 0 ? (size_t)n : 1);
  if (!buf) {
    why->set("no memory to read %s (%ld bytes)", path, n);
    return false;
  }
  const int f = hal.file_open(path, false);
  if (f < 0) {
    hal.psram_free(buf);
    why->set("cannot open %s", path);
    return false;
  }
  size_t got = 0;
  while (got < (size_t)n) {
    const long r = hal.file_read(f, buf + got, (size_t)n - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  hal.file_close(f);
  if (got != (size_t)n) {
    hal.psram_free(buf);
    why->set("reading %s stopped after %u of %ld bytes", path, (unsigned)got, n);
    return false;
  }
  *data = buf;
  *size = got;
  return true;
}

void CardWriter::write(const void* data, size_t n) {
  const uint8_t* p = (const uint8_t*)data;
  crc_ = tv::crc32(crc_, p, n);
  bytes_ += n;
  while (n > 0 && !failed_) {
    size_t take = sizeof buf_ - used_;
    if (take > n) take = n;
    memcpy(buf_ + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
    if (used_ == sizeof buf_) flush();
  }
}

bool CardWriter::flush() {
  if (used_ > 0 && !failed_) {
    const long w = hal_.file_write(handle_, buf_, used_);
    if (w > 0) written_ += (size_t)w;
    if (w != (long)used_) failed_ = true;
  }
  used_ = 0;
  return !failed_;
}

// CRC-32 and length of a file as read back from the card.
bool crc_of_file(Hal& hal, const char* path, uint32_t* crc, size_t* bytes) {
  const int f = hal.file_open(path, false);
  if (f < 0) return false;
  uint8_t chunk[512];
  uint32_t c = 0;
  size_t total = 0;
  for (;;) {
    const long r = hal.file_read(f, chunk, sizeof chunk);
    if (r < 0) {
      hal.file_close(f);
      return false;
    }
    if (r == 0) break;
    c = tv::crc32(c, chunk, (size_t)r);
    total += (size_t)r;
  }
  hal.file_close(f);
  *crc = c;
  *bytes = total;
  return true;
}

namespace {

struct MemoryContent {
  const uint8_t* data;
  size_t size;
};

bool write_memory(void* ctx, CardWriter* out, Reason*) {
  const MemoryContent& m = *(const MemoryContent*)ctx;
  out->write(m.data, m.size);
  return true;
}

}  // namespace

bool replace_file_atomic(Hal& hal, const char* path, ContentFn content, void* ctx, bool keep_backup, Reason* why) {
  char tmp[kPathMax], bak[kPathMax];
  if (!join_path(tmp, path, ".tmp") || !join_path(bak, path, ".bak")) {  // both checked before anything is written
    why->set("the path %s is too long", path);
    return false;
  }
  if (hal.exists(tmp) && !hal.remove(tmp)) {
    why->set("cannot remove the stale %s", tmp);
    return false;
  }
  // 1. the new content, complete and verified, beside the old file
  const int f = hal.file_open(tmp, true);
  if (f < 0) {
    why->set("cannot create %s", tmp);
    return false;
  }
  CardWriter w(hal, f);
  const bool produced = content(ctx, &w, why);
  const bool flushed = w.flush();
  const bool closed = hal.file_close(f);
  if (!produced || !flushed || !closed) {
    if (produced)
      why->set("writing %s failed after %u of %u bytes (card full or removed?)", tmp, (unsigned)w.written(),
               (unsigned)w.bytes());
    hal.remove(tmp);
    return false;
  }
  uint32_t crc = 0;
  size_t bytes = 0;
  if (!crc_of_file(hal, tmp, &crc, &bytes) || bytes != w.bytes() || crc != w.crc()) {
    why->set("%s does not read back as written (%u of %u bytes, CRC %s)", tmp, (unsigned)bytes, (unsigned)w.bytes(),
             crc == w.crc() ? "equal" : "differs");
    hal.remove(tmp);
    return false;
  }
  return finish_replace(hal, path, keep_backup, why);
}

bool finish_replace(Hal& hal, const char* path, bool keep_backup, Reason* why) {
  char tmp[kPathMax], bak[kPathMax];
  if (!join_path(tmp, path, ".tmp") || !join_path(bak, path, ".bak")) {
    why->set("the path %s is too long", path);
    return false;
  }
  // 2. the old file out of the way (kept as the backup)
  if (keep_backup) {
    if (!hal.exists(path)) {
      // nothing to keep: the backup stays
    } else if (hal.exists(bak) && !hal.remove(bak)) {
      why->set("cannot remove the old backup %s", bak);
      return false;
    } else if (!hal.rename(path, bak)) {
      why->set("cannot rename %s to %s", path, bak);
      return false;
    }
  } else if (hal.exists(path) && !hal.remove(path)) {
    why->set("cannot remove the old %s", path);
    return false;
  }
  // 3. the new file in place
  if (!hal.rename(tmp, path)) {
    why->set("cannot rename %s to %s", tmp, path);
    return false;
  }
  return true;
}

bool replace_file_atomic(Hal& hal, const char* path, const uint8_t* data, size_t size, bool keep_backup, Reason* why) {
  MemoryContent m{data, size};
  return replace_file_atomic(hal, path, write_memory, &m, keep_backup, why);
}

bool write_new_file(Hal& hal, const char* tmp, const char* path, const uint8_t* data, size_t size, Reason* why) {
  const int f = hal.file_open(tmp, true);
  if (f < 0) {
    why->set("cannot create %s", tmp);
    return false;
  }
  const long w = hal.file_write(f, data, size);
  const bool closed = hal.file_close(f);
  bool ok = false;
  if (w != (long)size || !closed)
    why->set("writing %s failed after %ld of %u bytes (card full or removed?)", tmp, w > 0 ? w : 0L, (unsigned)size);
  else if (!hal.rename(tmp, path))
    why->set("cannot rename %s to %s", tmp, path);
  else
    ok = true;
  if (!ok) hal.remove(tmp);
  return ok;
}

bool is_jpeg_name(const char* name) {
  if (!name || name[0] == '.' || name[0] == 0) return false;
  const char* dot = strrchr(name, '.');
  if (!dot) return false;
  char ext[6] = {0};
  size_t n = strlen(dot + 1);
  if (n < 3 || n > 4) return false;
  for (size_t i = 0; i < n; ++i) {
    char c = dot[1 + i];
    ext[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
  }
  return strcmp(ext, "jpg") == 0 || strcmp(ext, "jpeg") == 0;
}

void count_jpeg(void* ctx, const char* name, bool is_dir) {
  if (!is_dir && is_jpeg_name(name)) ++*(int*)ctx;
}

}  // namespace tvfw
