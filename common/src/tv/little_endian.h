// Little-endian reads and writes of the file formats' integers and floats (.tvb, the raw myWeights.bin),
// the same on every host byte order.
#pragma once
#include <stdint.h>
#include <string.h>

namespace tv {

inline uint16_t read_le16(const uint8_t* p) {
  return (uint16_t)(p[0] | p[1] << 8);
}
inline uint32_t read_le32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
inline float read_le_f32(const uint8_t* p) {
  const uint32_t u = read_le32(p);
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline void write_le16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
inline void write_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
inline void write_le_f32(uint8_t* p, float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  write_le32(p, u);
}

}  // namespace tv
