// Writing C source text without printf or heap (device-safe): a buffered sink, exact numbers, and the
// escaping that keeps a label or a tensor name harmless inside a C string literal or a // comment.
// Shared by the TinyVision header (header_writer.cpp) and the reference firmware's myWeights.h
// (raw_weights.cpp), which the firmware also writes on the device.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tv/float_text.h"

namespace tv {

// Where the text goes: write(ctx, s, n) receives the header in order, in chunks of any size.
struct TextSink {
  void* ctx;
  void (*write)(void* ctx, const char* s, size_t n);
};

// Text to a sink through a 512-byte buffer (flushed when full and on destruction).
class CTextOut {
 public:
  explicit CTextOut(const TextSink& sink) : sink_(sink) {}
  ~CTextOut() { flush(); }
  void put(const char* s, size_t n) {
    while (n) {
      if (len_ == sizeof(buf_)) flush();
      size_t k = sizeof(buf_) - len_;
      if (k > n) k = n;
      memcpy(buf_ + len_, s, k);
      len_ += k;
      s += k;
      n -= k;
    }
  }
  void str(const char* s) { put(s, strlen(s)); }
  void ch(char c) { put(&c, 1); }
  void num(int64_t v) {
    char b[24];
    put(b, format_int(v, b));
  }
  void hex32(uint32_t v) {
    char b[10] = {'0', 'x'};
    for (int i = 0; i < 8; ++i) b[2 + i] = "0123456789ABCDEF"[(v >> (28 - 4 * i)) & 15u];
    put(b, 10);
  }
  void hex8(uint8_t v) {
    char b[4] = {'0', 'x', "0123456789ABCDEF"[v >> 4], "0123456789ABCDEF"[v & 15u]};
    put(b, 4);
  }
  // A number for a comment ("inf" and "nan" are fine there).
  void g9(float v) {
    char b[kFloatTextMax];
    size_t n = format_float_g9(v, b);
    if (n)
      put(b, n);
    else
      str(v != v ? "nan" : (v < 0 ? "-inf" : "inf"));
  }
  // The prefix, as given or in upper case.
  void prefix(const char* p, bool upper) {
    for (; *p; ++p) ch(upper && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p);
  }
  // Text inside a C string literal: quotes, backslashes, "??" (trigraphs) and non-printable bytes
  // escaped (octal, three digits, so a following digit cannot extend the escape).
  void c_string_text(const char* s, size_t n) {
    char prev = 0;
    for (size_t i = 0; i < n; ++i) {
      const unsigned char c = (unsigned char)s[i];
      if (c == '"' || c == '\\') {
        ch('\\');
        ch((char)c);
      } else if (c == '?' && prev == '?') {
        str("\\?");
      } else if (c < 0x20 || c > 0x7E) {
        octal(c);
      } else {
        ch((char)c);
      }
      prev = (char)c;
    }
  }
  // Text inside a // comment: no backslash (it could splice lines), no "??", printable ASCII only.
  void comment_text(const char* s, size_t n) {
    char prev = 0;
    for (size_t i = 0; i < n; ++i) {
      const unsigned char c = (unsigned char)s[i];
      if (c == '\\' || c < 0x20 || c > 0x7E || (c == '?' && prev == '?'))
        octal(c);
      else
        ch((char)c);
      prev = (char)c;
    }
  }
  void flush() {
    if (len_) sink_.write(sink_.ctx, buf_, len_);
    len_ = 0;
  }

 private:
  void octal(unsigned char c) {
    char b[4] = {'\\', (char)('0' + (c >> 6)), (char)('0' + ((c >> 3) & 7)), (char)('0' + (c & 7))};
    put(b, 4);
  }
  TextSink sink_;
  char buf_[512];
  size_t len_ = 0;
};

inline bool is_finite_float(float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  return ((u >> 23) & 0xFFu) != 0xFFu;
}

}  // namespace tv
