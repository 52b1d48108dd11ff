#include "tv/names.h"

namespace tv {

namespace {

// The length FAT compares: trailing dots and spaces do not count.
size_t fat_length(const char* t, size_t len) {
  while (len > 0 && (t[len - 1] == '.' || t[len - 1] == ' ')) --len;
  return len;
}

// The code point at t[*i] (valid UTF-8: shortest form, no surrogate, at most U+10FFFF), advancing *i;
// -1 for anything else.
int32_t next_code_point(const char* t, size_t len, size_t* i) {
  const uint8_t b = (uint8_t)t[*i];
  const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
  if (extra < 0 || len - *i <= (size_t)extra) return -1;  // a sequence cut short
  int32_t cp = extra == 0 ? b : (int32_t)(b & (0x3F >> extra));
  for (int k = 1; k <= extra; ++k) {
    const uint8_t c = (uint8_t)t[*i + (size_t)k];
    if ((c >> 6) != 2) return -1;
    cp = (cp << 6) | (c & 0x3F);
  }
  static const int32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  *i += (size_t)extra + 1;
  return cp;
}

// The upper case FAT compares by (FatFs' up-case rule for the scripts named in names.h).
int32_t up_case(int32_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 0x20;  // ASCII, Latin-1
  if (c == 0xFF) return 0x178;
  const bool pair_even = (c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177);  // upper even, lower odd
  const bool pair_odd = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);   // upper odd, lower even
  if ((pair_even && (c & 1)) || (pair_odd && !(c & 1))) return c - 1;
  if ((c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) || (c >= 0x430 && c <= 0x44F)) return c - 0x20;  // Greek, Cyrillic
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  if (c >= 0xFF41 && c <= 0xFF5A) return c - 0x20;  // full-width Latin
  return c;
}

}  // namespace

bool name_allowed(const char* text, size_t len, size_t max_bytes) {
  if (len == 0 || len > max_bytes || fat_length(text, len) == 0) return false;  // "", ".", "..", " ."
  if (text[0] == '_') return false;  // the board's own folders (/images/_unsure): never a class
  for (size_t i = 0; i < len;) {
    const int32_t c = next_code_point(text, len, &i);
    if (c < 32 || c == 0x7F) return false;  // invalid UTF-8 (-1) or a control character
    for (const char* bad = "/\\:*?\"<>|"; *bad; ++bad)
      if (c == *bad) return false;
  }
  return true;
}

bool same_folder_name(const char* a, size_t la, const char* b, size_t lb) {
  la = fat_length(a, la);
  lb = fat_length(b, lb);
  size_t i = 0, j = 0;
  while (i < la && j < lb) {
    const size_t i0 = i, j0 = j;
    int32_t x = next_code_point(a, la, &i), y = next_code_point(b, lb, &j);
    if (x < 0 || y < 0) {  // bytes that are no UTF-8 compare as they are
      x = (uint8_t)a[i0];
      y = (uint8_t)b[j0];
      i = i0 + 1;
      j = j0 + 1;
    }
    if (up_case(x) != up_case(y)) return false;
  }
  return i == la && j == lb;
}

bool is_correction_photo(const char* path, size_t len) {
  size_t b = len;
  while (b > 0 && path[b - 1] != '/' && path[b - 1] != '\\') --b;
  const char* n = path + b;
  const size_t nl = len - b;
  if (nl < 7 || (n[0] | 0x20) != 'i' || (n[1] | 0x20) != 'm' || (n[2] | 0x20) != 'g' || n[3] != '_') return false;
  size_t i = 4;
  while (i < nl && n[i] >= '0' && n[i] <= '9') ++i;
  return i > 4 && i + 2 < nl && (n[i] | 0x20) == 'c' && n[i + 1] == '.';
}

}  // namespace tv
